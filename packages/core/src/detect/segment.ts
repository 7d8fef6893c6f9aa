/**
 * Retrospective segmentation of a window of per-minute values: optimal
 * partitioning (PELT, exact with pruning) with a straight line — level and
 * slope — per segment, on the log values in units of their noise sd. A
 * steady trend or the rising half of a daily cycle is one segment, not a
 * staircase; a change of level or of slope is a boundary when it lowers
 * the total squared residual (in noise variances) by more than the
 * penalty, which is fixed for every series (`SEGMENT_PENALTY_PER_LOG_N` ×
 * log n).
 *
 * The noise sd is read from the first differences (MAD / √2, so a trend
 * is not noise) and, where minutes carry counts, per point from the
 * sampling variance of a minute of `count` events (`noiseVar`), so a
 * minute of 2 events weighs less than one of 2,000.
 *
 * Pure; O(n) prefix sums and O(n²) worst case (pruning makes it near
 * linear when boundaries are frequent). Used on windows of a few hundred
 * points, only when something asks (segment-verdict.ts).
 */

/** Penalty per boundary, in noise variances per log n (one fixed value for every series). */
export const SEGMENT_PENALTY_PER_LOG_N = 12;
/** Shortest segment, points. */
export const SEGMENT_MIN_SIZE = 3;

export interface Segment {
  /** First and one-past-last position in the input (`start` inclusive, `end` exclusive). */
  start: number;
  end: number;
  /** The fitted line on log values: value at `start` and slope per position. */
  level: number;
  slope: number;
  /** Points with data in it. */
  points: number;
}

export interface SegmentOptions {
  /** Penalty per boundary in noise variances per log n. */
  penaltyPerLogN?: number;
  minSize?: number;
}

/**
 * Robust sd of one step of `ys` (already logs; NaN = missing), from its
 * first differences: 1.4826 × MAD / √2. Where most differences are 0 (a
 * clean series read from log histograms: its p50 stays in one bucket most
 * minutes, so the MAD is 0) the mean absolute difference stands in
 * (× √(π/2) / √2, the same sd for normal noise): a change is one difference
 * among n, so it adds δ/n. Only a series that never moves falls back to the
 * plain sd (which a change inflates), then 1.
 */
export function firstDifferenceSd(ys: ArrayLike<number>): number {
  const v: number[] = [];
  for (let i = 0; i < ys.length; i++) if (Number.isFinite(ys[i])) v.push(ys[i]!);
  const d: number[] = [];
  for (let i = 1; i < v.length; i++) d.push(v[i]! - v[i - 1]!);
  if (d.length > 0) {
    const m = medianOf(d);
    const dev = d.map((x) => Math.abs(x - m));
    const mad = medianOf(dev);
    const sd = (1.4826 * mad) / Math.SQRT2;
    if (sd > 0) return sd;
    const meanAbs = dev.reduce((a, b) => a + b, 0) / dev.length;
    const fromMean = (meanAbs * Math.sqrt(Math.PI / 2)) / Math.SQRT2;
    if (fromMean > 0) return fromMean;
  }
  if (v.length > 1) {
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const sd = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (v.length - 1));
    if (sd > 0) return sd;
  }
  return 1;
}

function medianOf(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

/**
 * The optimal partition of `ys` (logs, NaN = missing) into segments of a
 * line each. `weights` (optional, same length) are inverse noise variances
 * relative to the series' (1 = typical); default 1 for every point.
 */
export function segmentLines(
  ys: ArrayLike<number>,
  sd: number,
  opts: SegmentOptions = {},
  weights?: ArrayLike<number>,
): Segment[] {
  const n = ys.length;
  if (n === 0) return [];
  const minSize = Math.max(2, opts.minSize ?? SEGMENT_MIN_SIZE);
  // Prefix sums over positions 0..n of w, w t, w t², w y, w t y, w y², and the count of data points.
  const S = new Float64Array(7 * (n + 1));
  let present = 0;
  for (let i = 0; i < n; i++) {
    const o = 7 * i;
    const y = ys[i]!;
    const ok = Number.isFinite(y);
    const w = ok ? (weights ? weights[i]! : 1) : 0;
    const yy = ok ? y / sd : 0;
    const t = i;
    S[o + 7] = S[o]! + w;
    S[o + 8] = S[o + 1]! + w * t;
    S[o + 9] = S[o + 2]! + w * t * t;
    S[o + 10] = S[o + 3]! + w * yy;
    S[o + 11] = S[o + 4]! + w * t * yy;
    S[o + 12] = S[o + 5]! + w * yy * yy;
    S[o + 13] = S[o + 6]! + (ok ? 1 : 0);
    if (ok) present++;
  }
  const penalty =
    (opts.penaltyPerLogN ?? SEGMENT_PENALTY_PER_LOG_N) * Math.log(Math.max(present, 2));
  /** Weighted residual sum of squares of one line over positions [a, b). */
  const cost = (a: number, b: number): number => {
    const oa = 7 * a;
    const ob = 7 * b;
    const w = S[ob]! - S[oa]!;
    if (w <= 0) return 0;
    const st = S[ob + 1]! - S[oa + 1]!;
    const stt = S[ob + 2]! - S[oa + 2]!;
    const sy = S[ob + 3]! - S[oa + 3]!;
    const sty = S[ob + 4]! - S[oa + 4]!;
    const syy = S[ob + 5]! - S[oa + 5]!;
    const yyc = syy - (sy * sy) / w;
    const ttc = stt - (st * st) / w;
    const tyc = sty - (st * sy) / w;
    const rss = ttc > 1e-9 ? yyc - (tyc * tyc) / ttc : yyc;
    return rss > 0 ? rss : 0;
  };
  const dataIn = (a: number, b: number) => S[7 * b + 6]! - S[7 * a + 6]!;
  // F[b] = best cost of positions [0, b); last[b] = start of its last segment.
  const F = new Float64Array(n + 1).fill(Infinity);
  const last = new Int32Array(n + 1);
  F[0] = -penalty;
  // The candidate starts of the last segment (PELT's set), and their costs for the current end.
  let cand = new Int32Array(n + 1);
  let next = new Int32Array(n + 1);
  const costs = new Float64Array(n + 1);
  let nc = 1;
  cand[0] = 0;
  for (let b = 1; b <= n; b++) {
    let best = Infinity;
    let arg = -1;
    for (let k = 0; k < nc; k++) {
      const a = cand[k]!;
      if (dataIn(a, b) < minSize && !(a === 0 && b === n)) {
        costs[k] = NaN;
        continue;
      }
      const c = F[a]! + cost(a, b) + penalty;
      costs[k] = c;
      if (c < best) {
        best = c;
        arg = a;
      }
    }
    if (arg >= 0) {
      F[b] = best;
      last[b] = arg;
      // PELT pruning: a start that cannot beat the best even before the penalty never will.
      let m = 0;
      for (let k = 0; k < nc; k++) {
        const c = costs[k]!;
        if (Number.isNaN(c) || c - penalty <= best) next[m++] = cand[k]!;
      }
      [cand, next] = [next, cand];
      nc = m;
    }
    cand[nc++] = b;
  }
  if (!Number.isFinite(F[n]!)) return [fitSegment(ys, 0, n)];
  const bounds: number[] = [];
  for (let b = n; b > 0; b = last[b]!) bounds.push(b);
  bounds.push(0);
  bounds.reverse();
  const out: Segment[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) out.push(fitSegment(ys, bounds[k]!, bounds[k + 1]!));
  return out;
}

/** The least-squares line (log values) over positions [start, end). */
export function fitSegment(ys: ArrayLike<number>, start: number, end: number): Segment {
  let w = 0;
  let st = 0;
  let stt = 0;
  let sy = 0;
  let sty = 0;
  for (let i = start; i < end; i++) {
    const y = ys[i]!;
    if (!Number.isFinite(y)) continue;
    const t = i - start;
    w++;
    st += t;
    stt += t * t;
    sy += y;
    sty += t * y;
  }
  if (w === 0) return { start, end, level: NaN, slope: 0, points: 0 };
  const ttc = stt - (st * st) / w;
  const slope = ttc > 1e-9 ? (sty - (st * sy) / w) / ttc : 0;
  const level = sy / w - slope * (st / w);
  return { start, end, level, slope, points: w };
}

/** The line's log value at position `i` (may lie outside the segment). */
export function lineAt(s: Segment, i: number): number {
  return s.level + s.slope * (i - s.start);
}
