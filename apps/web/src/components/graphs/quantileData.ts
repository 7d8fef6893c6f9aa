/**
 * Shape a quantiles response (`{step_ms, points: [{t, count, q}]}`) into a
 * LatencyFrame: one line per quantile plus the count column. One pass, so a
 * 30-day, 1-minute series (43,200 points) shapes in a few milliseconds.
 */
import type { QuantilePoint } from '../../api/types.ts';
import { quantileColor, quantileLabel, type LatencyFrame } from './latencyFrame.ts';

export interface QuantileShapeOptions {
  /** Which quantiles to draw, as the API names them ("0.5", "0.99"). Default: all present in the first point. */
  quantiles?: string[];
  /** Log scales cannot draw ≤ 0 (a gap view may be 0): such values become null. */
  dropNonPositive?: boolean;
}

export function shapeQuantiles(
  resp: { step_ms: number; points: readonly QuantilePoint[] },
  opts: QuantileShapeOptions = {},
): LatencyFrame {
  const pts = resp.points;
  const qs = opts.quantiles ?? Object.keys(pts[0]?.q ?? {}).sort((a, b) => Number(a) - Number(b));
  const step = resp.step_ms;
  const dropNonPositive = !!opts.dropNonPositive;
  const clean = (v: number | undefined): number | null =>
    v === undefined || v === null || !Number.isFinite(v) || (dropNonPositive && v <= 0) ? null : v;
  const lines = (cols: Array<Array<number | null>>) =>
    qs.map((q, k) => ({
      key: q,
      label: quantileLabel(q),
      color: quantileColor(q),
      values: cols[k]!,
      width: Number(q) >= 0.99 ? 2 : 1.5,
    }));

  // The usual answer has a point every step: then times follow from the index and
  // only the first and last need parsing (43,200 Date.parse calls cost more than the chart).
  const n = pts.length;
  const first = n ? Date.parse(pts[0]!.t) : NaN;
  const contiguous =
    n > 1 &&
    Date.parse(pts[n - 1]!.t) - first === (n - 1) * step &&
    sampledOnGrid(pts, first, step);
  if (contiguous) {
    const x = new Array<number>(n);
    const count = new Array<number | null>(n);
    const cols = qs.map(() => new Array<number | null>(n));
    for (let i = 0; i < n; i++) {
      const p = pts[i]!;
      x[i] = (first + i * step) / 1000;
      count[i] = p.count;
      const q = p.q;
      for (let k = 0; k < qs.length; k++) cols[k]![i] = clean(q[qs[k]!]);
    }
    return { x, count, stepMs: step, lines: lines(cols) };
  }

  const x: number[] = [];
  const count: Array<number | null> = [];
  const cols: Array<Array<number | null>> = qs.map(() => []);
  let prev = NaN;
  for (let i = 0; i < n; i++) {
    const p = pts[i]!;
    const t = Date.parse(p.t);
    if (t - prev > step * 1.5) {
      // A hole in the data: break every line here rather than join across it.
      x.push((prev + step) / 1000);
      count.push(null);
      for (const c of cols) c.push(null);
    }
    prev = t;
    x.push(t / 1000);
    count.push(p.count);
    for (let k = 0; k < qs.length; k++) cols[k]!.push(clean(p.q[qs[k]!]));
  }
  return { x, count, stepMs: step, lines: lines(cols) };
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

/** Spot-check ~64 points (all of a short answer) against first + i·step. */
function sampledOnGrid(pts: readonly QuantilePoint[], first: number, step: number): boolean {
  const every = Math.max(1, Math.floor(pts.length / 64));
  for (let i = 0; i < pts.length; i += every)
    if (Date.parse(pts[i]!.t) !== first + i * step) return false;
  return true;
}
