/**
 * A cohort regression's chart: the slow hosts' line and the fast rest's (from
 * `GET /regressions/{id}/cohort`), each with its own before/after levels drawn
 * over it, and the whole series' p50 faint for context. Pure; unit-tested.
 */
import type { QuantileColumns, RegressionCohortLines } from '@onset/contract';
import { formatLatencyMs } from '../../lib/format.ts';
import type { LevelBand } from '../../components/graphs/ChartOverlay.tsx';
import {
  alignLines,
  type LatencyFrame,
  type LineColor,
} from '../../components/graphs/latencyFrame.ts';
import { timedValues } from '../../components/graphs/quantileData.ts';

type Side = RegressionCohortLines['sides'][number];

const COLOR: Record<Side['side'], LineColor> = { slow: 'gap', fast: 'server' };

export function shapeCohortLines(
  resp: RegressionCohortLines,
  whole: { step_ms: number; columns: QuantileColumns } | undefined,
  opts: { dropNonPositive?: boolean } = {},
): LatencyFrame {
  const inputs = resp.sides.flatMap((s) =>
    (['0.5', '0.99'] as const).map((q) => ({
      key: `${s.side}-${q}`,
      label: `${s.side} ${q === '0.5' ? 'p50' : 'p99'}`,
      color: COLOR[s.side],
      dash: q === '0.99',
      width: q === '0.5' ? 2 : 1.25,
      points: timedValues(s.columns, q, opts),
    })),
  );
  if (whole)
    inputs.push({
      key: 'all-0.5',
      label: 'all hosts p50',
      color: 'p90',
      dash: true,
      width: 1,
      points: timedValues(whole.columns, '0.5', opts),
    });
  return alignLines(inputs, resp.step_ms);
}

/** Each side's levels as bands over its own line: the slow side's keyed before/after (the headline's). */
export function cohortBands(
  resp: RegressionCohortLines,
  window: { fromMs: number; toMs: number },
  onsetMs: number,
): LevelBand[] {
  const out: LevelBand[] = [];
  for (const s of resp.sides) {
    if (!s.levels) continue;
    const prefix = s.side === 'slow' ? '' : `${s.side}-`;
    const who = `${s.side} hosts`;
    for (const [when, lv, x0, x1] of [
      ['before', s.levels.before, window.fromMs, onsetMs],
      ['after', s.levels.after, onsetMs, window.toMs],
    ] as const) {
      if (!lv.count) continue;
      out.push({
        key: `${prefix}${when}`,
        label: `${who} ${when}: p50 ${formatLatencyMs(lv.p50_ms)} · p99 ${formatLatencyMs(lv.p99_ms)}`,
        x0: x0 / 1000,
        x1: x1 / 1000,
        lo: lv.p50_ms,
        hi: lv.p99_ms,
      });
    }
  }
  return out;
}
