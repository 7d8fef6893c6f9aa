/**
 * Tail collapses: a noisy p99 that settles onto a steady, higher band — the
 * caller's view of a delayed ACK. The caller's own slow tail (a few % of
 * calls, spread wide) makes its p99 wander (~24–98 ms); once a share of
 * calls waits a fixed timer (~40 ms), the top 1 % lands among those waits
 * and the p99 sits at ~45–65 ms every minute. Its median hardly moves, and
 * the floor test (tail-floor.ts) needs a before window whose lower part
 * held still, which a p99 this noisy never has.
 *
 * Every COLLAPSE_EVERY points, for after-windows of COLLAPSE_AFTER points
 * ending now against up to COLLAPSE_BEFORE points before them in the regime:
 * - the shape (gates): the before window's narrowest band holding
 *   COLLAPSE_SHARE of its p99s is at least COLLAPSE_MIN_SPREAD wide (a noisy
 *   p99; a calm one's level shifts are the level tests' job); the after
 *   window's is at most COLLAPSE_WIDTH of that, and of each before half's
 *   (not a series already settling); the after minutes had at most
 *   COLLAPSE_COUNT_GROWTH × the events (more events make any quantile
 *   steadier);
 * - the test: the floor rose. L is the after window's COLLAPSE_FLOOR_Q
 *   quantile, its j-th of m points; under exchangeability the share of the
 *   distribution below it is Beta(j, m - j + 1), so the number of before
 *   points below L (less the minRatio margin) is beta-binomial(n, j,
 *   m - j + 1): exact and distribution-free (ties count against). Bonferroni
 *   over the windows and COLLAPSE_PENALTY for repeating it.
 * The onset is the split that best separates a low share of points at or
 * above L from a high one (binomial likelihood). Reported with shape
 * 'floor' and the bands either side (the narrowest range holding half of
 * the raw p99s), which say what changed when the median did not.
 */
import type { DetectorContext } from './context.ts';
import { report } from './report.ts';
import { scratch } from './scratch.ts';
import { median, select } from './stats.ts';
import type { MinutePoint, StepChange } from './types.ts';

export const COLLAPSE_EVERY = 16;
export const COLLAPSE_AFTER: readonly number[] = [32, 48, 64, 96];
export const COLLAPSE_BEFORE = 120;
export const COLLAPSE_MIN_BEFORE = 60;
/** The band holds this share of the after window. */
export const COLLAPSE_SHARE = 0.5;
/** Band width at most this share of the before window's narrowest band of the same share. */
export const COLLAPSE_WIDTH = 0.5;
/** The before window's narrowest band of COLLAPSE_SHARE at least this wide (log units, ×1.35). */
export const COLLAPSE_MIN_SPREAD = 0.3;
/** The after window's floor: its quantile at this share. */
export const COLLAPSE_FLOOR_Q = 0.1;
export const COLLAPSE_COUNT_GROWTH = 1.5;
export const COLLAPSE_PENALTY = 20;
/** Windows whose gates fail before a check gives up (all four cost ~+23 % of the detector's time, two ~+11 %). */
export const COLLAPSE_MAX_FAILED = 2;
export const COLLAPSE_LOCALISE = 8;

const P99 = 1;

/** What a confirmed collapse looked like (log units of the p99, the detector's y). */
export interface CollapseBand {
  p: number;
  /** The after window's low quantile (its floor). */
  floor: number;
  /** The after band's edges. */
  lo: number;
  hi: number;
  /** The before window's narrowest band of the same share. */
  beforeLo: number;
  beforeHi: number;
}

/** The periodic collapse check of the p99 at point `now`: a change, or null. */
export function collapseCheck(d: DetectorContext, now: number): StepChange | null {
  const s = d.metrics[P99]!;
  if (s.warmPoints < d.opts.warmupPoints) return null;
  const oldest = Math.max(s.regimeStart, now - d.ring.cap + 1);
  let best: CollapseBand | null = null;
  let failed = 0;
  for (const m of COLLAPSE_AFTER) {
    const split = now - m + 1;
    if (split - oldest < COLLAPSE_MIN_BEFORE) break;
    const b = collapseTest(d, split, now);
    if (!b) {
      // Two windows whose shape fails end the check (a longer one mostly holds the same points).
      if (++failed >= COLLAPSE_MAX_FAILED) break;
      continue;
    }
    if (!best || b.p < best.p) best = b;
  }
  if (!best || best.p * COLLAPSE_AFTER.length * COLLAPSE_PENALTY >= d.opts.alpha) return null;
  const [split, unc] = localise(d, oldest, now, best.floor);
  const ch = report(d, P99, 1, split, now, unc, best.p);
  if (!ch) return null;
  ch.shape = 'floor';
  ch.band = {
    before: rawBand(d, Math.max(oldest, split - COLLAPSE_BEFORE), split - 1),
    after: rawBand(d, split, now),
  };
  return ch;
}

/**
 * The onset of a collapse onto a band from `lo` up: the split of [from, now]
 * that best separates a low share of points at or above the band's floor
 * from a high one (the binomial likelihood of a change in that share; the
 * after minutes above the narrow band count too: the floor is what rose),
 * and the half-width of the splits within 2 log-likelihood units of it (at
 * least 2 points).
 */
function localise(d: DetectorContext, from: number, now: number, lo: number): [number, number] {
  const n = now - from + 1;
  const inBand = scratch(15, n);
  let total = 0;
  for (let v = from; v <= now; v++) {
    inBand[v - from] = d.ring.y(P99, v % d.ring.cap) >= lo ? 1 : 0;
    total += inBand[v - from]!;
  }
  const ll = (k: number, m: number) =>
    (k > 0 ? k * Math.log(k / m) : 0) + (k < m ? (m - k) * Math.log(1 - k / m) : 0);
  const lls = scratch(16, n);
  let best = -Infinity;
  let bestAt = now - COLLAPSE_AFTER[0]! + 1;
  let before = 0;
  for (let v = from; v <= now; v++) {
    const nb = v - from;
    const na = n - nb;
    const kb = before;
    const ka = total - before;
    before += inBand[nb]!;
    lls[nb] = -Infinity;
    if (nb < COLLAPSE_MIN_BEFORE / 2 || na < COLLAPSE_AFTER[0]! / 2 || ka / na <= kb / nb) continue;
    const l = ll(kb, nb) + ll(ka, na);
    lls[nb] = l;
    if (l > best) {
      best = l;
      bestAt = v;
    }
  }
  let unc = 2;
  for (let v = from; v <= now; v++)
    if (lls[v - from]! >= best - 2) unc = Math.max(unc, Math.abs(v - bestAt));
  return [bestAt, Math.min(unc, COLLAPSE_LOCALISE * 2)];
}

/** The narrowest range holding half of the raw p99s of [from, to], in the input unit. */
function rawBand(d: DetectorContext, from: number, to: number): [number, number] {
  const a = d.ring.rangeRaw(P99, from, to, 13).sort();
  const [i, w] = narrowest(a, Math.max(2, Math.ceil(COLLAPSE_SHARE * a.length)));
  const f = d.opts.floor;
  const ms = (y: number) => Math.max(0, Math.exp(y) - f);
  return [ms(a[i]!), ms(a[i]! + w)];
}

/** The collapse test at `split` (after: [split, now]); null where a gate fails. */
export function collapseTest(d: DetectorContext, split: number, now: number): CollapseBand | null {
  const ring = d.ring;
  const s = d.metrics[P99]!;
  const from = Math.max(s.regimeStart, split - COLLAPSE_BEFORE, now - ring.cap + 1);
  const n = split - from;
  const m = now - split + 1;
  if (n < 8 || m < 8) return null;
  // Screens first (no sort of the before window): the central run of half the before points
  // is at least as wide as the narrowest, so a gate that fails on it fails on the narrowest.
  const before = ring.rangeY(P99, from, split - 1, 13);
  const kb = Math.max(2, Math.ceil(COLLAPSE_SHARE * n));
  const c0 = (n - kb) >> 1;
  const central = select(before, c0 + kb - 1) - select(before, c0);
  if (central < COLLAPSE_MIN_SPREAD) return null;
  const after = ring.rangeY(P99, split, now, 14).sort();
  const k = Math.max(2, Math.ceil(COLLAPSE_SHARE * m));
  if (narrowest(after, k)[1] > COLLAPSE_WIDTH * central) return null;
  before.sort();
  const [bi, bWidth] = narrowest(before, kb);
  // A noisy p99 before (a calm one's level shifts are the level tests' job)…
  if (bWidth < COLLAPSE_MIN_SPREAD) return null;
  // …that collapsed: the after window's narrowest band of half its points is far narrower.
  const [i, aWidth] = narrowest(after, k);
  if (aWidth > COLLAPSE_WIDTH * bWidth) return null;
  // Each half of the before window was noisy too (not a series already settling).
  const half = n >> 1;
  for (const [a, b] of [
    [from, from + half - 1],
    [from + half, split - 1],
  ] as const) {
    const h = ring.rangeY(P99, a, b, 15).sort();
    if (
      aWidth >
      COLLAPSE_WIDTH * narrowest(h, Math.max(2, Math.ceil(COLLAPSE_SHARE * h.length)))[1]
    )
      return null;
  }
  // More events a minute make every quantile steadier: not a change of the calls.
  if (medianCount(d, split, now) > COLLAPSE_COUNT_GROWTH * medianCount(d, from, split - 1))
    return null;
  // The floor rose: before points below the after window's low quantile (less the margin).
  const j = Math.max(1, Math.ceil(COLLAPSE_FLOOR_Q * m));
  const floor = after[j - 1]!;
  const below = lowerBound(before, floor - d.logMinRatio);
  const p = betaBinomialSf(below, n, j, m - j + 1);
  return {
    p,
    floor,
    lo: after[i]!,
    hi: after[i + k - 1]!,
    beforeLo: before[bi]!,
    beforeHi: before[bi]! + bWidth,
  };
}

/** Share of recent minutes inside the after band at or under which a floor is over (the band held at least half). */
export const FLOOR_OVER_SHARE = 0.25;

/**
 * Has a floor ended? Its median may never have moved, so "back at the before
 * level" means the p99 no longer sits in the after band: at most
 * FLOOR_OVER_SHARE of at least `minPoints` recent minutes inside it (it held
 * half of them when confirmed). `recovered`: 1 with none inside, 0 with half.
 */
export function floorRecovery(
  band: NonNullable<StepChange['band']>,
  recent: readonly MinutePoint[],
  minPoints: number,
): { resolved: boolean; level: number; recovered: number; points: number } {
  const ys = recent.filter((p) => p.count > 0 && Number.isFinite(p.p99)).map((p) => p.p99);
  if (!ys.length) return { resolved: false, level: NaN, recovered: 0, points: 0 };
  const [lo, hi] = band.after;
  const inside = ys.filter((y) => y >= lo && y <= hi).length / ys.length;
  return {
    resolved: ys.length >= minPoints && inside <= FLOOR_OVER_SHARE,
    level: median(ys),
    recovered: Math.max(0, Math.min(1, 1 - 2 * inside)),
    points: ys.length,
  };
}

/** Index and width of the narrowest run of k consecutive sorted values. */
function narrowest(a: Float64Array, k: number): [number, number] {
  let best = Infinity;
  let at = 0;
  for (let i = 0; i + k - 1 < a.length; i++) {
    const w = a[i + k - 1]! - a[i]!;
    if (w < best) {
      best = w;
      at = i;
    }
  }
  return [at, best];
}

function medianCount(d: DetectorContext, from: number, to: number): number {
  const c = scratch(15, to - from + 1);
  for (let v = from; v <= to; v++) c[v - from] = d.ring.count[v % d.ring.cap]!;
  c.sort();
  return c[c.length >> 1]!;
}

/** First index with a[i] >= x (a sorted ascending). */
function lowerBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const LOG_FACT: number[] = [0];
function logFact(n: number): number {
  for (let i = LOG_FACT.length; i <= n; i++) LOG_FACT.push(LOG_FACT[i - 1]! + Math.log(i));
  return LOG_FACT[n]!;
}
/** log Γ(x) for a positive integer x. */
const logGammaInt = (x: number) => logFact(x - 1);
const logBeta = (a: number, b: number) => logGammaInt(a) + logGammaInt(b) - logGammaInt(a + b);

/** P(C >= c) for C ~ beta-binomial(n, a, b), a and b positive integers (summed upwards: exact for tiny tails). */
export function betaBinomialSf(c: number, n: number, a: number, b: number): number {
  if (c <= 0) return 1;
  if (c > n) return 0;
  const base = -logBeta(a, b);
  let sum = 0;
  for (let x = c; x <= n; x++)
    sum += Math.exp(logFact(n) - logFact(x) - logFact(n - x) + logBeta(x + a, n - x + b) + base);
  return Math.min(1, sum);
}

/** P(C <= c) for C ~ beta-binomial(n, a, b), a and b positive integers. */
export function betaBinomialCdf(c: number, n: number, a: number, b: number): number {
  if (c < 0) return 0;
  if (c >= n) return 1;
  const base = -logBeta(a, b);
  let sum = 0;
  for (let x = 0; x <= c; x++)
    sum += Math.exp(logFact(n) - logFact(x) - logFact(n - x) + logBeta(x + a, n - x + b) + base);
  return Math.min(1, sum);
}
