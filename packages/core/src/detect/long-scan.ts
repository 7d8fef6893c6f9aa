/**
 * The long scan, for small p50 steps in calm series, and the wander test
 * that decides which series are calm. A 1.25× step at a per-minute sd of
 * 0.4 (a few events a minute) is 0.55 sd: the margin test cannot confirm
 * it, and the unshifted one needs more than 120 points a side to reach α
 * with its penalties, while the CUSUMs' baseline absorbs it within ~30
 * points.
 */
import type { DetectorContext } from './context.ts';
import { localise } from './localise.ts';
import { noiseSd } from './model.ts';
import { report } from './report.ts';
import { scratch } from './scratch.ts';
import { unshiftedTest, type SplitTest } from './split-tests.ts';
import { select } from './stats.ts';
import {
  LONG_BEFORE,
  LONG_MAX_AFTER,
  LONG_MIN_AFTER,
  LONG_MIN_BEFORE,
  LONG_PENALTY,
  LONG_RING_MARGIN,
  LONG_SCREEN,
  round6,
  WANDER_BLOCK,
  WANDER_KEEP,
  WANDER_MIN,
  WANDER_RATIO,
} from './tuning.ts';
import type { StepChange } from './types.ts';

/**
 * Every LONG_EVERY points the best mean-shift split with
 * LONG_MIN_AFTER..LONG_MAX_AFTER points after it is found (unweighted means
 * of values winsorised around the baseline) against up to LONG_BEFORE
 * points before it (in the regime), and tested unshifted as in
 * unshiftedTest() (raw and detrended, medians at least minRatio apart),
 * times LONG_PENALTY for the choice of split. Only where the p50 shows no
 * slow wander (see wander()): over 8 hours a daily cycle is a ramp or a
 * bend that no linear trend removes, and a rank test over it would call it
 * a step.
 */
export function longScan(d: DetectorContext, now: number): StepChange | null {
  const s = d.metrics[0]!;
  const ring = d.ring;
  const from = Math.max(
    s.regimeStart,
    now - LONG_BEFORE - LONG_MAX_AFTER + 1,
    ring.valid - ring.cap - ring.longCap,
    ring.longFrom,
    0,
  );
  const N = now - from + 1;
  // The split must stay well inside the ring, where localise() and the
  // report read (with small windows the ring is shorter than the scan).
  const lo = Math.max(LONG_MIN_BEFORE, N - Math.min(LONG_MAX_AFTER, ring.cap - LONG_RING_MARGIN));
  const hi = N - LONG_MIN_AFTER;
  if (hi < lo) return null;
  // Running sums of the values, winsorised at clip sd around the baseline
  // (unweighted: a calm series' counts hardly vary), walking the long
  // history and then the ring without a division per point.
  const ringFrom = ring.valid - ring.cap;
  const sd = noiseSd(d, 0, now);
  const lim = d.opts.clip * sd;
  const low = s.level - lim;
  const high = s.level + lim;
  const cx = scratch(9, N + 1);
  cx[0] = 0;
  let i = 0;
  let acc = 0;
  const y0 = ring.logValue[0];
  const z0 = ring.zShift[0];
  const su = ring.sigmaU;
  const longMicro = ring.longMicro;
  for (let v = from, q = from % ring.longCap; v < ringFrom; v++, i++) {
    const y = longMicro[q]! * 1e-6;
    acc += y < low ? low : y > high ? high : y;
    cx[i + 1] = acc;
    if (++q === ring.longCap) q = 0;
  }
  for (let v = Math.max(from, ringFrom), q = v % ring.cap; v <= now; v++, i++) {
    const y = y0[q]! + su * z0[q]!;
    acc += y < low ? low : y > high ? high : y;
    cx[i + 1] = acc;
    if (++q === ring.cap) q = 0;
  }
  let best = -1;
  let bestK = -1;
  let bestDiff = 0;
  for (let k = lo; k <= hi; k++) {
    const diff = (acc - cx[k]!) / (N - k) - cx[k]! / k;
    const v = (diff * diff * k * (N - k)) / N;
    if (v > best) {
      best = v;
      bestK = k;
      bestDiff = diff;
    }
  }
  // (The rank tests must reach p ≈ 2e-9 after their penalties, about 6 sd:
  // a split whose z is under LONG_SCREEN is not worth them.)
  if (bestK < 0 || Math.abs(bestDiff) < d.logMinRatio || best < LONG_SCREEN * LONG_SCREEN * sd * sd)
    return null;
  const ys = scratch(1, N);
  const ts = scratch(3, N);
  const t0 = ring.historyT(from);
  for (let j = 0; j < N; j++) {
    ys[j] = ring.historyY(from + j);
    ts[j] = (ring.historyT(from + j) - t0) / 60_000;
  }
  const dir = bestDiff > 0 ? 1 : -1;
  const r = unshiftedTest(d, dir, ys.subarray(bestK), ys.subarray(0, bestK), ts);
  const p = Math.min(1, r.p * LONG_PENALTY);
  if (!(p < d.opts.alpha)) return null;
  const split = from + bestK;
  const test: SplitTest = { p, tail: false, theta: 0, onset: split };
  const { split: at, unc } = localise(d, 0, dir, test, now, -Infinity, true);
  return report(d, 0, dir, at, now, unc, p);
}

/**
 * Does the p50 wander more slowly than its noise, as a daily cycle does?
 * Every WANDER_BLOCK points, the block's median joins the last nine; the
 * |difference| with the previous one and with the one eight blocks back
 * (~4 hours) join the last WANDER_KEEP of each. For noise (and a rare
 * step, which touches one lag-1 and eight lag-8 differences of 24) the
 * lower third of |lag-8| sits below the median |lag-1|; a daily cycle
 * moves block medians 4 hours apart by up to 1.1× its amplitude and pushes
 * it above. Calm series only get the long scan.
 */
export function wander(d: DetectorContext, vi: number): void {
  const s = d.metrics[0];
  // The block's (upper) median, by selection rather than a sort.
  const block = d.ring.rangeY(0, vi - WANDER_BLOCK + 1, vi, 1);
  const m = round6(select(block, WANDER_BLOCK >> 1));
  s.wanderMedians.push(m);
  if (s.wanderMedians.length > 9) s.wanderMedians.shift();
  const k = s.wanderMedians.length;
  if (k >= 2) {
    s.wanderLag1.push(round6(Math.abs(m - s.wanderMedians[k - 2]!)));
    if (s.wanderLag1.length > WANDER_KEEP) s.wanderLag1.shift();
  }
  if (k === 9) {
    s.wanderLag8.push(round6(Math.abs(m - s.wanderMedians[0]!)));
    if (s.wanderLag8.length > WANDER_KEEP) s.wanderLag8.shift();
  }
  let calm = false;
  if (s.wanderLag8.length >= WANDER_MIN) {
    const a8 = scratch(1, s.wanderLag8.length);
    a8.set(s.wanderLag8);
    const a1 = scratch(3, s.wanderLag1.length);
    a1.set(s.wanderLag1);
    const lower8 = select(a8, Math.floor((a8.length - 1) / 3));
    const med1 = select(a1, a1.length >> 1);
    calm = lower8 <= WANDER_RATIO * med1;
  }
  s.calmVerdicts = calm ? s.calmVerdicts + 1 : 0;
}
