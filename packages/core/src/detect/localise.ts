/**
 * Where did the step start? Maximum-likelihood split over the testable
 * window, with the model of the test that confirmed the step, and the onset
 * interval around it.
 */
import type { DetectorContext } from './context.ts';
import { medianOf, scratch } from './scratch.ts';
import type { SplitTest } from './split-tests.ts';
import { MIN_AFTER, ONSET_LR_DROP } from './tuning.ts';

/**
 * A mean shift (on values winsorised around the two provisional levels and
 * weighted by the noise model, so a minute with 2 events counts less than
 * one with 2,000), or a change in the share of points beyond the exceedance
 * threshold (Bernoulli). The onset interval holds the splits within
 * ONSET_LR_DROP of the best 2·log-LR. For the reported onset
 * (`posteriorMedian`), the posterior median of the split replaces the maximum.
 */
export function localise(
  d: DetectorContext,
  mi: number,
  dir: number,
  test: SplitTest,
  now: number,
  lowest = -Infinity,
  posteriorMedian = false,
): { split: number; unc: number } {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const onset = test.onset;
  const from = Math.max(s.regimeStart, onset - d.opts.beforePoints, now - ring.cap + 1);
  const N = now - from + 1;
  const ys = ring.rangeY(mi, from, now, 1);
  const nB = onset - from;
  const cw = scratch(8, N + 1);
  const cx = scratch(9, N + 1);
  cw[0] = 0;
  cx[0] = 0;
  if (test.tail) {
    for (let i = 0; i < N; i++) {
      const b = dir > 0 ? ys[i]! > test.theta : ys[i]! >= test.theta;
      cw[i + 1] = i + 1;
      cx[i + 1] = cx[i]! + (b ? 1 : 0);
    }
  } else {
    const mB = medianOf(ys.subarray(0, nB));
    const mA = medianOf(ys.subarray(nB));
    const lo = Math.min(mB, mA);
    const hi = Math.max(mB, mA);
    const cl = d.opts.clip;
    for (let i = 0; i < N; i++) {
      const c = ring.count[(from + i) % ring.cap]!;
      const v2 = s.minuteVar + s.perEventVar / c + d.resolutionVar;
      const sd = Math.sqrt(v2);
      let x = ys[i]!;
      if (x < lo - cl * sd) x = lo - cl * sd;
      else if (x > hi + cl * sd) x = hi + cl * sd;
      const w = 1 / v2;
      cw[i + 1] = cw[i]! + w;
      cx[i + 1] = cx[i]! + w * x;
    }
  }
  const W = cw[N]!;
  const X = cx[N]!;
  const bern = (x: number, n: number) =>
    x > 0 && x < n ? x * Math.log(x / n) + (n - x) * Math.log(1 - x / n) : 0;
  const whole = test.tail ? bern(X, W) : 0;
  // Candidate splits: keep a few points on the left, and at least MIN_AFTER on the right.
  const first = Math.max(4, nB - 30, lowest - from);
  const last = N - MIN_AFTER;
  const lr = scratch(10, Math.max(0, last - first + 1));
  let best = -Infinity;
  let bestK = nB;
  for (let k = first; k <= last; k++) {
    const w1 = cw[k]!;
    const w2 = W - w1;
    const m1 = cx[k]! / w1;
    const m2 = (X - cx[k]!) / w2;
    const diff = m2 - m1;
    let v = 0;
    // Only shifts in the alarm's direction count.
    if (dir * diff > 0)
      v = test.tail
        ? 2 * (bern(cx[k]!, w1) + bern(X - cx[k]!, w2) - whole)
        : (diff * diff * w1 * w2) / W;
    lr[k - first] = v;
    if (v > best) {
      best = v;
      bestK = k;
    }
  }
  if (posteriorMedian) {
    // The onset reported is the posterior median of the split (flat prior,
    // exp(lr / 2) its likelihood ratio) rather than its mode: the same for
    // a symmetric profile, and nearer on average for a skewed one, as when
    // a sparse tail first shows a geometric wait after the step.
    let tot = 0;
    for (let k = first; k <= last; k++) tot += Math.exp((lr[k - first]! - best) / 2);
    let acc = 0;
    for (let k = first; k <= last; k++) {
      acc += Math.exp((lr[k - first]! - best) / 2);
      if (acc >= tot / 2) {
        bestK = k;
        break;
      }
    }
  }
  let unc = 0;
  for (let k = first; k <= last; k++) {
    if (lr[k - first]! >= best - ONSET_LR_DROP) unc = Math.max(unc, Math.abs(k - bestK));
  }
  return { split: from + bestK, unc };
}
