/**
 * Shape a quantiles response (columns layout: `{step_ms, columns: {t, count, q}}`)
 * into a LatencyFrame: one line per quantile plus the count column. The
 * columns are what uPlot draws, so a contiguous answer (the usual one) needs
 * one pass to clean values and a 30-day, 1-minute series shapes in a few ms.
 */
import type { QuantileColumns } from '@onset/contract';
import {
  quantileColor,
  quantileLabel,
  type LatencyFrame,
  type TimedValue,
} from './latencyFrame.ts';

export interface QuantileShapeOptions {
  /** Which quantiles to draw, as the API names them ("0.5", "0.99"). Default: all in the answer. */
  quantiles?: string[];
  /** Log scales cannot draw ≤ 0 (a gap view may be 0): such values become null. */
  dropNonPositive?: boolean;
}

type Value = number | null | undefined;

function cleaner(dropNonPositive: boolean) {
  return (v: Value): number | null =>
    v === undefined || v === null || !Number.isFinite(v) || (dropNonPositive && v <= 0) ? null : v;
}

export function shapeQuantiles(
  resp: { step_ms: number; columns: QuantileColumns },
  opts: QuantileShapeOptions = {},
): LatencyFrame {
  const { t, count: counts, q: byQ } = resp.columns;
  const qs = opts.quantiles ?? Object.keys(byQ).sort((a, b) => Number(a) - Number(b));
  const step = resp.step_ms;
  const clean = cleaner(!!opts.dropNonPositive);
  const src = qs.map((q) => byQ[q] ?? []);
  const lines = (cols: Array<Array<number | null>>) =>
    qs.map((q, k) => ({
      key: q,
      label: quantileLabel(q),
      color: quantileColor(q),
      values: cols[k]!,
      width: Number(q) >= 0.99 ? 2 : 1.5,
    }));

  // Steps are ascending and unique, so first + (n−1)·step = last means no holes.
  // Then the answer's own arrays are drawn as they are (read-only from here on):
  // a column is copied only when it holds a value the scale cannot draw.
  const n = t.length;
  if (n > 0 && t[n - 1]! - t[0]! === (n - 1) * step) {
    const x = new Array<number>(n);
    for (let i = 0; i < n; i++) x[i] = t[i]! / 1000;
    const cols = src.map((col) =>
      col.length === n && drawable(col, !!opts.dropNonPositive) ? col : col.map(clean),
    );
    for (const c of cols) while (c.length < n) c.push(null);
    return { x, count: counts, stepMs: step, lines: lines(cols) };
  }

  const x: number[] = [];
  const count: Array<number | null> = [];
  const cols: Array<Array<number | null>> = src.map(() => []);
  let prev = NaN;
  for (let i = 0; i < n; i++) {
    const ti = t[i]!;
    if (ti - prev > step * 1.5) {
      // A hole in the data: break every line here rather than join across it.
      x.push((prev + step) / 1000);
      count.push(null);
      for (const c of cols) c.push(null);
    }
    prev = ti;
    x.push(ti / 1000);
    count.push(counts[i] ?? null);
    for (let k = 0; k < src.length; k++) cols[k]!.push(clean(src[k]![i]));
  }
  return { x, count, stepMs: step, lines: lines(cols) };
}

/** Every value is a finite number (and > 0 for a log scale). */
function drawable(col: ReadonlyArray<number | null>, positive: boolean): boolean {
  for (let i = 0; i < col.length; i++) {
    const v = col[i];
    if (typeof v !== 'number' || !(positive ? v > 0 : Number.isFinite(v))) return false;
  }
  return true;
}

/** One quantile of an answer as timed values (for aligning several answers on one axis). */
export function timedValues(
  columns: QuantileColumns,
  q: string,
  opts: { dropNonPositive?: boolean } = {},
): TimedValue[] {
  const clean = cleaner(!!opts.dropNonPositive);
  const vals = columns.q[q] ?? [];
  return columns.t.map((tMs, i) => ({ tMs, v: clean(vals[i]) }));
}

/** The finite values of one quantile before and after an instant (all of them as `after` without one). */
export function splitAt(
  columns: QuantileColumns,
  q: string,
  atMs?: number,
): { before: number[]; after: number[]; n: number } {
  const vals = columns.q[q] ?? [];
  const before: number[] = [];
  const after: number[] = [];
  columns.t.forEach((tMs, i) => {
    const v = vals[i];
    if (v === null || v === undefined || !Number.isFinite(v)) return;
    (atMs !== undefined && tMs < atMs ? before : after).push(v);
  });
  return { before, after, n: before.length + after.length };
}

/** Summary of what the frame shows, for the accessible description and the legend. */
export function lineSummary(values: ReadonlyArray<number | null>): {
  last: number | null;
  min: number | null;
  max: number | null;
} {
  let last: number | null = null;
  let min: number | null = null;
  let max: number | null = null;
  for (const v of values) {
    if (v === null) continue;
    last = v;
    if (min === null || v < min) min = v;
    if (max === null || v > max) max = v;
  }
  return { last, min, max };
}
