/**
 * The cohort split: one line per value of a host attribute (os.version,
 * service.version, dependency.*), so "only hosts on 4.15 got slow" is one
 * look instead of a week of bisecting. Pure.
 */
import type { CohortsResponse, QuantilesColumns } from '@onset/contract';
import { alignLines, type LatencyFrame, type LineColor } from './latencyFrame.ts';
import { splitAt, timedValues } from './quantileData.ts';
import { medianOf as median } from '@onset/core';

export const MAX_COHORT_LINES = 8;

/** Attribute keys worth splitting by: those with more than one value, the usual suspects first. */
export function splitCandidates(c: CohortsResponse | undefined): string[] {
  if (!c) return [];
  const rank = (k: string) =>
    k === 'os.version'
      ? 0
      : k === 'service.version'
        ? 1
        : k.startsWith('dependency.')
          ? 2
          : k === 'host.arch'
            ? 3
            : 4;
  return c.attributes
    .filter((a) => a.values.length > 1)
    .map((a) => a.key)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

export function cohortValues(c: CohortsResponse | undefined, key: string): string[] {
  return c?.attributes.find((a) => a.key === key)?.values.map((v) => v.value) ?? [];
}

export interface CohortSummary {
  value: string;
  color: LineColor;
  beforeMs: number | null;
  afterMs: number | null;
  /** After/before of the medians; null without both. */
  ratio: number | null;
  /** Marked slow by the regression engine, or (without one) ≥ 2× after the onset. */
  slow: boolean;
  points: number;
}

export function shapeCohorts(
  inputs: ReadonlyArray<{
    value: string;
    resp: Pick<QuantilesColumns, 'step_ms' | 'columns'> | undefined;
  }>,
  q: string,
  opts: { onsetMs?: number; slow?: readonly string[]; dropNonPositive?: boolean } = {},
): { frame: LatencyFrame; summary: CohortSummary[] } {
  const present = inputs
    .filter((i) => i.resp && i.resp.columns.t.length > 0)
    .slice(0, MAX_COHORT_LINES);
  const stepMs = Math.min(...present.map((i) => i.resp!.step_ms), Infinity);
  const colored = present.map((i, k) => ({ ...i, color: `c${k}` as LineColor }));
  const frame = alignLines(
    colored.map((i) => ({
      key: i.value,
      label: i.value,
      color: i.color,
      width: 1.75,
      points: timedValues(i.resp!.columns, q, opts),
    })),
    Number.isFinite(stepMs) ? stepMs : 60_000,
  );
  const base = colored.map((i) => {
    const { before, after, n } = splitAt(i.resp!.columns, q, opts.onsetMs);
    return { i, b: median(before), a: median(after), n };
  });
  // A cohort that only exists after the onset (hosts that got a new kernel, a new version)
  // has no "before": compare it with the fastest other cohort, before or after.
  const summary = base.map<CohortSummary>(({ i, b, a, n }, k) => {
    const ratio = b && a !== null ? a / b : null;
    const others = Math.min(...base.filter((_, j) => j !== k).map((x) => x.a ?? x.b ?? Infinity));
    const slow = opts.slow?.length
      ? opts.slow.includes(i.value)
      : (ratio !== null && ratio >= 2) ||
        (a !== null && Number.isFinite(others) && a >= 2 * others);
    return { value: i.value, color: i.color, beforeMs: b, afterMs: a, ratio, slow, points: n };
  });
  return { frame, summary };
}
