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

export function shapeQuantiles(resp: { step_ms: number; points: readonly QuantilePoint[] }, opts: QuantileShapeOptions = {}): LatencyFrame {
  const pts = resp.points;
  const qs = opts.quantiles ?? Object.keys(pts[0]?.q ?? {}).sort((a, b) => Number(a) - Number(b));
  const step = resp.step_ms;
  const x: number[] = [];
  const count: Array<number | null> = [];
  const cols: Array<Array<number | null>> = qs.map(() => []);
  // The usual answer has a point every step: then times follow from the index and
  // only the first and last need parsing (43,200 Date.parse calls cost more than the chart).
  const first = pts.length ? Date.parse(pts[0]!.t) : NaN;
  const contiguous = pts.length > 1 && Date.parse(pts[pts.length - 1]!.t) - first === (pts.length - 1) * step && sampledOnGrid(pts, first, step);
  let prev = NaN;
  for (let i = 0; i < pts.length; i++) {
    const p = pts[i]!;
    const t = contiguous ? first + i * step : Date.parse(p.t);
    if (t - prev > step * 1.5) {
      // A hole in the data: break every line here rather than join across it.
      x.push((prev + step) / 1000);
      count.push(null);
      for (const c of cols) c.push(null);
    }
    prev = t;
    x.push(t / 1000);
    count.push(p.count);
    for (let k = 0; k < qs.length; k++) {
      const v = p.q[qs[k]!];
      cols[k]!.push(v === undefined || v === null || !Number.isFinite(v) || (opts.dropNonPositive && v <= 0) ? null : v);
    }
  }
  return {
    x,
    count,
    stepMs: step,
    lines: qs.map((q, k) => ({ key: q, label: quantileLabel(q), color: quantileColor(q), values: cols[k]!, width: Number(q) >= 0.99 ? 2 : 1.5 })),
  };
}

/** Summary of what the frame shows, for the accessible description and the legend. */
export function lineSummary(values: ReadonlyArray<number | null>): { last: number | null; min: number | null; max: number | null } {
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
  for (let i = 0; i < pts.length; i += every) if (Date.parse(pts[i]!.t) !== first + i * step) return false;
  return true;
}
