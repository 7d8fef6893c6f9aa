/**
 * The confirmation tests: is there a step at a given split? Distribution-free
 * rank tests (Mann-Whitney and exceedances) of the points after the split
 * against up to beforePoints before it, shifted by minRatio so that only
 * steps of at least minRatio pass, raw and detrended; and, for noisy series,
 * an unshifted test with a pooled trend.
 */
import type { DetectorContext } from './context.ts';
import { noiseSd } from './model.ts';
import { medianOf, scratch } from './scratch.ts';
import { exceedanceSorted, mannWhitneySorted, robustTrend } from './stats.ts';
import {
  EXCEEDANCE_SHARE,
  MIN_AFTER,
  MIN_BEFORE,
  TOP_SHARE,
  UNSHIFTED_GATE_P,
  UNSHIFTED_MIN_AFTER,
  UNSHIFTED_MIN_SD,
  UNSHIFTED_PENALTY,
  STEADY_MAX_AFTER,
  STEADY_SHARE,
  VANISHED_SHARE,
} from './tuning.ts';

export interface SplitTest {
  p: number;
  /** Confirmed by an exceedance test (localise on the share beyond `theta`). */
  tail: boolean;
  theta: number;
  onset: number;
}

export interface RankTestResult {
  p: number;
  tail: boolean;
  theta: number;
}

/**
 * Three tests of "after beyond before", Bonferroni-combined: a rank-sum
 * test (the whole level moved), an exceedance test over the history's
 * upper 15% (a tail that moved in only some minutes, as a sparse p99 does:
 * with 5 events a minute a slow 5% of events shows in a quarter of the
 * minutes) and a third: for regressions over its top 2% (new extremes),
 * for improvements over its top 30% (a tail that showed in many minutes
 * and vanished: a rank sum sees only half of such a step, as the minutes
 * without the tail are unchanged).
 */
function rankTests(dir: number, yA: Float64Array, yB: Float64Array): RankTestResult {
  const sA = scratch(4, yA.length);
  sA.set(yA);
  sA.sort();
  const sB = scratch(5, yB.length);
  sB.set(yB);
  sB.sort();
  const pmw = dir > 0 ? mannWhitneySorted(sA, sB) : mannWhitneySorted(sB, sA);
  const n = sB.length;
  const r1 = Math.max(1, Math.round(EXCEEDANCE_SHARE * n));
  const pex = exceedanceSorted(sA, sB, r1, dir);
  const r2 = Math.max(1, Math.round((dir > 0 ? TOP_SHARE : VANISHED_SHARE) * n));
  const ptop = exceedanceSorted(sA, sB, r2, dir);
  const p = Math.min(1, 3 * Math.min(pmw, pex, ptop));
  if (pmw <= pex && pmw <= ptop) return { p, tail: false, theta: 0 };
  return { p, tail: true, theta: sB[n - (pex <= ptop ? r1 : r2)]! };
}

/**
 * Test a split for a step in direction `dir` on metric `mi`: the points
 * [onset, now] against up to `beforePoints` points before `onset`.
 * p is NaN when the split is not testable.
 */
export function testSplit(
  d: DetectorContext,
  mi: number,
  dir: number,
  onset: number,
  now: number,
  detrend: boolean,
): SplitTest {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const from = Math.max(s.regimeStart, onset - d.opts.beforePoints, now - ring.cap + 1);
  const nB = onset - from;
  const nA = now - onset + 1;
  if (nB < MIN_BEFORE || nA < MIN_AFTER) return { p: NaN, tail: false, theta: 0, onset };
  const yB = ring.rangeY(mi, from, onset - 1, 1);
  const yA = ring.rangeY(mi, onset, now, 2);
  // H0: the after points exceed the before points by at most minRatio.
  // Shifting the after side by that margin makes the tests reject only
  // steps of at least minRatio.
  const shift = dir * d.logMinRatio;
  const yAs = scratch(12, nA);
  for (let i = 0; i < nA; i++) yAs[i] = yA[i]! - shift;
  const raw = rankTests(dir, yAs, yB);
  const out: SplitTest = { p: raw.p, tail: raw.tail, theta: raw.theta + shift, onset };
  let tAll: Float64Array | null = null;
  if (detrend && nB >= 20 && raw.p < d.opts.alpha) {
    // A ramp (diurnal) must not pass for a step: the shift must survive
    // removing the robust trend of the history, extrapolated forwards.
    tAll = ring.rangeT(from, now, 3);
    const { slope, intercept } = robustTrend(tAll.subarray(0, nB), yB);
    const rB = scratch(6, nB);
    const rA = scratch(7, nA);
    for (let i = 0; i < nB; i++) rB[i] = yB[i]! - (intercept + slope * tAll[i]!);
    for (let i = 0; i < nA; i++) rA[i] = yA[i]! - (intercept + shift + slope * tAll[nB + i]!);
    out.p = Math.max(out.p, rankTests(dir, rA, rB).p);
  }
  // (Only worth trying when the margin test already leans that way: for a
  // step the unshifted test can confirm, the margin test's p is < 0.05.)
  const medShift = dir * (medianOf(yA) - medianOf(yB));
  if (
    out.p >= d.opts.alpha &&
    raw.p < UNSHIFTED_GATE_P &&
    nB >= 20 &&
    nA >= UNSHIFTED_MIN_AFTER &&
    medShift >= d.logMinRatio &&
    (noiseSd(d, mi, now) >= UNSHIFTED_MIN_SD || (nA <= STEADY_MAX_AFTER && steady(yB, medShift)))
  ) {
    tAll ??= ring.rangeT(from, now, 3);
    const nm = unshiftedTest(d, dir, yA, yB, tAll);
    if (nm.p < out.p) {
      out.p = nm.p;
      out.tail = nm.tail;
      out.theta = nm.theta;
    }
  }
  return out;
}

/**
 * A calm history: the medians of its thirds within STEADY_SHARE of the
 * step. Where the history holds still, a dense series' step of a few noise
 * sds is no slow load drift, and the unshifted test may judge it (a ×1.3
 * step at a per-minute sd of 0.05 is 5 sds, yet the margin test against
 * ×1.2 cannot confirm it).
 */
function steady(yB: Float64Array, shift: number): boolean {
  const n = yB.length;
  const k = Math.floor(n / 3);
  const m1 = medianOf(yB.subarray(0, k));
  const m2 = medianOf(yB.subarray(k, 2 * k));
  const m3 = medianOf(yB.subarray(2 * k));
  return Math.max(m1, m2, m3) - Math.min(m1, m2, m3) <= STEADY_SHARE * shift;
}

/**
 * The slow path for small steps in noisy (sparse) series: the margin test
 * above needs a 1.3× step to clear 1.1× by a p < 1e-5 rank test, which
 * 120 minutes of 3 events each cannot do. Here the step is tested against
 * "no shift" instead (10× the Bonferroni penalty), raw and after removing
 * a trend pooled from both sides (so a diurnal ramp seen on either side is
 * not taken for a step), and both medians must still differ by at least
 * minRatio. Only where a point's noise sd is at least UNSHIFTED_MIN_SD: there the
 * minutes are dominated by independent sampling noise, while in dense
 * series slow load drifts would make any unshifted test significant.
 */
export function unshiftedTest(
  d: DetectorContext,
  dir: number,
  yA: Float64Array,
  yB: Float64Array,
  tAll: Float64Array,
): RankTestResult {
  const nB = yB.length;
  const nA = yA.length;
  const r0 = rankTests(dir, yA, yB);
  if (!(r0.p * UNSHIFTED_PENALTY < d.opts.alpha)) return { p: 1, tail: false, theta: 0 };
  const tB = tAll.subarray(0, nB);
  const tA = tAll.subarray(nB, nB + nA);
  const sB = robustTrend(tB, yB).slope;
  const wB = nB * nB * nB;
  let slope = sB;
  if (nA >= 20) {
    const sA = robustTrend(tA, yA).slope;
    const wA = nA * nA * nA;
    slope = (wB * sB + wA * sA) / (wB + wA);
  }
  const rB = scratch(6, nB);
  const rA = scratch(7, nA);
  for (let i = 0; i < nB; i++) rB[i] = yB[i]! - slope * tB[i]!;
  for (let i = 0; i < nA; i++) rA[i] = yA[i]! - slope * tA[i]!;
  if (!(dir * (medianOf(rA) - medianOf(rB)) >= d.logMinRatio))
    return { p: 1, tail: false, theta: 0 };
  const p1 = rankTests(dir, rA, rB).p;
  return {
    p: Math.min(1, UNSHIFTED_PENALTY * Math.max(r0.p, p1)),
    tail: r0.tail,
    theta: r0.theta,
  };
}
