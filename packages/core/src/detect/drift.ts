/**
 * Drift: a sustained ramp (a leak, a growing table) is reported once, with
 * its rate, instead of as nothing (a ramp slower than the baseline's largest
 * slope, MAX_SLOPE, is followed by it) or as a series of steps (a steeper
 * one outruns it).
 *
 * On the p50 history (ring and long history, up to DRIFT_WINDOW_BLOCKS
 * blocks of DRIFT_BLOCK points), block medians are fitted with a "flat,
 * then a straight ramp, then flat" model y = a + s·clamp(t - T1, 0, T2 - T1)
 * over every pair of block boundaries (prefix sums: O(1) per pair). A ramp
 * is reported when it rose by at least DRIFT_MIN_TOTAL at a slope of at
 * least DRIFT_MIN_SLOPE per minute (a daily cycle of ×2 peak to trough
 * climbs at most ~0.0015 per minute), at least DRIFT_SIGNIFICANCE residual
 * sds, explains the blocks at least DRIFT_STEP_GAIN times better than the
 * best single step, the level before it held still for at least
 * DRIFT_MIN_FLAT_BLOCKS blocks (a daily cycle bends in and out of its
 * trough) and the ramp is straight (its halves' slopes within
 * DRIFT_STRAIGHT of each other: the rise out of a daily trough accelerates).
 *
 * Once reported, an episode (direction, start, last seen rising) is kept in
 * the state: further steps in its direction while it goes on (and for
 * DRIFT_HOLD_POINTS after it was last seen rising) are the same drift and
 * are not reported again. A step confirmed while a ramp is under way
 * (the split inside a ramp that passes the same tests) is reported as the
 * drift instead.
 */
import type { DetectorContext } from './context.ts';
import { scratch } from './scratch.ts';
import { normalUpperTail } from './stats.ts';
import type { StepChange } from './types.ts';

/** Points per block median, blocks in the window, and how often the periodic check runs (points). */
export const DRIFT_BLOCK = 10;
export const DRIFT_WINDOW_BLOCKS = 48;
export const DRIFT_EVERY = 16;
/**
 * Fewest blocks before the ramp (held still) and in it: an hour for the
 * periodic check (over fewer blocks a step inside a block looks like a short
 * ramp); half an hour for a step confirmed inside a ramp still climbing,
 * confirmed at least DRIFT_LEAD_POINTS after the step's onset.
 */
export const DRIFT_MIN_FLAT_BLOCKS = 6;
export const DRIFT_MIN_RAMP_BLOCKS = 6;
export const DRIFT_MIN_RAMP_BLOCKS_AT_STEP = 3;
export const DRIFT_LEAD_POINTS = 15;
/** Smallest slope (log units per minute, ×1.13 an hour) and total rise (log units, ×1.3) of a drift. */
export const DRIFT_MIN_SLOPE = 0.002;
export const DRIFT_MIN_TOTAL = Math.log(1.3);
/** The rise in residual sds of the block medians; the gain over the best single step (residual sums of squares). */
export const DRIFT_SIGNIFICANCE = 8;
export const DRIFT_STEP_GAIN = 3;
/** ... at a step confirmed inside a ramp still climbing (a true step is flat after it, which no ramp fits). */
export const DRIFT_STEP_GAIN_AT_STEP = 2;
/** Largest ratio of the ramp halves' slopes; largest slope before the ramp, as a share of its slope. */
export const DRIFT_STRAIGHT = 2;
export const DRIFT_FLAT_SHARE = 0.25;
/** A ramp that ended more than this many blocks before now is left to the step path. */
export const DRIFT_RECENT_BLOCKS = 6;
/** An episode lasts this many points after the ramp was last seen rising. */
export const DRIFT_HOLD_POINTS = 60;

interface RampFit {
  dir: number;
  /** Valid indices of the ramp's first point and its last (the last point of the window if still rising). */
  start: number;
  end: number;
  /** Log units per minute; the rise (s·(T2 - T1)); the level before (log). */
  slope: number;
  total: number;
  level: number;
  /** Rise in residual sds (for a confidence). */
  z: number;
}

/** Is a step in direction dir at `split` part of the current drift episode (not to be reported again)? */
export function inDrift(d: DetectorContext, dir: number, split: number, now: number): boolean {
  const e = d.drift;
  return (
    e.dir === dir &&
    split >= e.start - DRIFT_BLOCK &&
    (split <= e.seen + DRIFT_BLOCK || now - e.seen <= DRIFT_HOLD_POINTS)
  );
}

/** The periodic check (every DRIFT_EVERY points, p50): a drift to report, or null. */
export function driftCheck(d: DetectorContext, now: number): StepChange | null {
  const fit = fitRamp(d, now, DRIFT_MIN_RAMP_BLOCKS, DRIFT_STEP_GAIN);
  if (!fit) return null;
  const e = d.drift;
  if (e.dir === fit.dir && (fit.start <= e.seen || now - e.seen <= DRIFT_HOLD_POINTS)) {
    // The same episode, still going on.
    if (fit.end >= now - DRIFT_BLOCK) e.seen = now;
    return null;
  }
  if (fit.end < now - DRIFT_RECENT_BLOCKS * DRIFT_BLOCK) return null;
  // A step already reported inside it is what moved the level.
  for (const r of d.recent)
    if (r.direction === fit.dir && r.onset >= fit.start - 2 * DRIFT_BLOCK) return null;
  return describeDrift(d, fit, now);
}

/**
 * A step about to be reported on quantile mi at `split`: the drift it is
 * part of (reported instead of the step), or null (a step).
 */
export function stepAsDrift(
  d: DetectorContext,
  dir: number,
  split: number,
  now: number,
): StepChange | null {
  const fit = fitRamp(d, now, DRIFT_MIN_RAMP_BLOCKS_AT_STEP, DRIFT_STEP_GAIN_AT_STEP);
  if (!fit || fit.dir !== dir) return null;
  // A ramp still climbing at `now`, through a split confirmed a while after it (a
  // large step is confirmed within a few points, a steep ramp's "step" late).
  if (fit.start > split + DRIFT_BLOCK || fit.end < now - DRIFT_BLOCK) return null;
  if (now - split < DRIFT_LEAD_POINTS) return null;
  return describeDrift(d, fit, now);
}

function describeDrift(d: DetectorContext, fit: RampFit, now: number): StepChange {
  const ring = d.ring;
  const floor = d.opts.floor;
  d.drift = { dir: fit.dir, start: fit.start, seen: now };
  const oldest = Math.max(0, ring.valid - ring.cap);
  const np = now % ring.cap;
  // The ramp may have begun before the ring's oldest point: its index is then counted back from there.
  const sv = Math.max(fit.start, oldest);
  const index = ring.index[sv % ring.cap]! - (sv - fit.start);
  const t = ring.historyT(fit.start);
  const lastFrom = Math.max(oldest, now - DRIFT_BLOCK + 1);
  const p99Now = medianRaw(d, 1, lastFrom, now);
  const preTo = fit.start - 1;
  const preFrom = Math.max(oldest, preTo - 2 * DRIFT_BLOCK + 1);
  const p99Before = preTo >= preFrom ? medianRaw(d, 1, preFrom, preTo) : p99Now - fit.total;
  const levelNow = fit.level + fit.total;
  const before = {
    p50: Math.max(0, Math.exp(fit.level) - floor),
    p99: Math.max(0, Math.exp(p99Before) - floor),
    count: 0,
    points: Math.max(0, fit.start - preFrom),
  };
  const after = {
    p50: Math.max(0, Math.exp(levelNow) - floor),
    p99: Math.max(0, Math.exp(p99Now) - floor),
    count: 0,
    points: now - fit.start + 1,
  };
  for (let v = preFrom; v <= preTo; v++) before.count += ring.count[v % ring.cap]!;
  for (let v = Math.max(oldest, fit.start); v <= now; v++) after.count += ring.count[v % ring.cap]!;
  const r = (b: number, a: number) => (b > 0 ? a / b : (a + floor) / (b + floor));
  const ratios = { p50: r(before.p50, after.p50), p99: r(before.p99, after.p99) };
  return {
    index,
    t,
    metric: 'p50',
    metrics: ['p50'],
    direction: fit.dir > 0 ? 'regression' : 'improvement',
    before,
    after,
    ratio: ratios.p50,
    ratios,
    confidence: 1 - normalUpperTail(fit.z),
    onsetUncertaintyPoints: DRIFT_BLOCK,
    detectedIndex: ring.index[np]!,
    detectedT: ring.time[np]!,
    shape: 'drift',
    driftPerHour: Math.exp(60 * fit.slope),
  };
}

function medianRaw(d: DetectorContext, mi: number, from: number, to: number): number {
  const xs = Array.from(d.ring.rangeRaw(mi, from, to, 12));
  xs.sort((a, b) => a - b);
  const h = xs.length >> 1;
  return xs.length % 2 ? xs[h]! : (xs[h - 1]! + xs[h]!) / 2;
}

/** The best flat-ramp-flat fit of the p50's block medians up to `now`, if it is a drift. */
function fitRamp(
  d: DetectorContext,
  now: number,
  minRamp: number,
  stepGain: number,
): RampFit | null {
  const ring = d.ring;
  const first = Math.max(ring.longFrom, ring.valid - ring.cap - ring.longCap, 0);
  const nb = Math.min(DRIFT_WINDOW_BLOCKS, Math.floor((now - first + 1) / DRIFT_BLOCK));
  if (nb < DRIFT_MIN_FLAT_BLOCKS + minRamp) return null;
  const from = now - nb * DRIFT_BLOCK + 1;
  // Block medians and mid times (minutes since the window's start).
  const ys = scratch(6, nb);
  const ts = scratch(7, nb);
  const buf = scratch(12, DRIFT_BLOCK);
  const t0 = ring.historyT(from);
  const block = (b: number) => {
    const v0 = from + b * DRIFT_BLOCK;
    for (let j = 0; j < DRIFT_BLOCK; j++) buf[j] = ring.historyY(v0 + j);
    buf.sort();
    ys[b] = (buf[(DRIFT_BLOCK >> 1) - 1]! + buf[DRIFT_BLOCK >> 1]!) / 2;
    ts[b] = (ring.historyT(v0) + ring.historyT(v0 + DRIFT_BLOCK - 1)) / 2 / 60_000 - t0 / 60_000;
  };
  // Screen first (cost): the last blocks must have moved by the smallest drift from the window's start.
  for (const b of [0, 1, 2, nb - 2, nb - 1]) block(b);
  const head = (ys[0]! + ys[1]! + ys[2]!) / 3;
  const tail = (ys[nb - 1]! + ys[nb - 2]!) / 2;
  if (Math.abs(tail - head) < 0.7 * DRIFT_MIN_TOTAL) return null;
  for (let b = 3; b < nb - 2; b++) block(b);

  // Prefix sums (index i: blocks [0, i)).
  const P = scratch(8, 6 * (nb + 1));
  P.fill(0);
  for (let i = 0; i < nb; i++) {
    const t = ts[i]!;
    const y = ys[i]!;
    const o = 6 * i;
    P[o + 6] = P[o]! + 1;
    P[o + 7] = P[o + 1]! + t;
    P[o + 8] = P[o + 2]! + t * t;
    P[o + 9] = P[o + 3]! + y;
    P[o + 10] = P[o + 4]! + t * y;
    P[o + 11] = P[o + 5]! + y * y;
  }
  const S = (k: number, i: number, j: number) => P[6 * j + k]! - P[6 * i + k]!;
  const n = nb;
  const Sy = S(3, 0, n);
  const Syy = S(5, 0, n);
  const total0 = Syy - (Sy * Sy) / n;

  // The best single step (for comparison).
  let ssStep = total0;
  for (let j = 2; j <= n - 2; j++) {
    const a = S(3, 0, j);
    const b = S(3, j, n);
    const ss = Syy - (a * a) / j - (b * b) / (n - j);
    if (ss < ssStep) ssStep = ss;
  }

  let best = Infinity;
  let bk1 = -1;
  let bk2 = -1;
  let bs = 0;
  let ba = 0;
  for (let k1 = DRIFT_MIN_FLAT_BLOCKS; k1 <= n - minRamp; k1++) {
    const T1 = (ts[k1 - 1]! + ts[k1]!) / 2;
    for (let k2 = k1 + minRamp; k2 <= n; k2++) {
      const T2 = k2 < n ? (ts[k2 - 1]! + ts[k2]!) / 2 : ts[n - 1]!;
      const D = T2 - T1;
      const nm = k2 - k1;
      const nt = n - k2;
      const stm = S(1, k1, k2);
      const sx = stm - T1 * nm + nt * D;
      const sxx = S(2, k1, k2) - 2 * T1 * stm + T1 * T1 * nm + nt * D * D;
      const sxy = S(4, k1, k2) - T1 * S(3, k1, k2) + D * S(3, k2, n);
      const vxx = sxx - (sx * sx) / n;
      if (!(vxx > 0)) continue;
      const cxy = sxy - (sx * Sy) / n;
      const ss = total0 - (cxy * cxy) / vxx;
      if (ss < best) {
        best = ss;
        bk1 = k1;
        bk2 = k2;
        bs = cxy / vxx;
        ba = (Sy - bs * sx) / n;
      }
    }
  }
  if (bk1 < 0) return null;
  const T1 = (ts[bk1 - 1]! + ts[bk1]!) / 2;
  const T2 = bk2 < n ? (ts[bk2 - 1]! + ts[bk2]!) / 2 : ts[n - 1]!;
  const total = bs * (T2 - T1);
  const dir = Math.sign(total);
  if (Math.abs(bs) < DRIFT_MIN_SLOPE || Math.abs(total) < DRIFT_MIN_TOTAL) return null;
  if (best * stepGain > ssStep) return null;
  const sd = Math.sqrt(Math.max(best, 1e-12) / Math.max(1, n - 4));
  const z = Math.abs(total) / sd;
  if (z < DRIFT_SIGNIFICANCE) return null;
  // Flat before: the pre-ramp blocks' own slope is small beside the ramp's.
  if (Math.abs(lineSlope(S, 0, bk1)) > DRIFT_FLAT_SHARE * Math.abs(bs)) return null;
  // Straight: the two halves of a long enough ramp climb alike.
  const nm = bk2 - bk1;
  if (nm >= 6) {
    const h = bk1 + (nm >> 1);
    const s1 = dir * lineSlope(S, bk1, h);
    const s2 = dir * lineSlope(S, h, bk2);
    if (!(s1 > 0 && s2 > 0) || s1 > DRIFT_STRAIGHT * s2 || s2 > DRIFT_STRAIGHT * s1) return null;
  }
  const start = from + bk1 * DRIFT_BLOCK;
  const end = bk2 < n ? from + bk2 * DRIFT_BLOCK - 1 : now;
  return { dir, start, end, slope: bs, total, level: ba, z };
}

/** Least-squares slope of blocks [i, j) from the prefix sums. */
function lineSlope(S: (k: number, i: number, j: number) => number, i: number, j: number): number {
  const n = S(0, i, j);
  const st = S(1, i, j);
  const v = S(2, i, j) - (st * st) / n;
  return v > 0 ? (S(4, i, j) - (st * S(3, i, j)) / n) / v : 0;
}
