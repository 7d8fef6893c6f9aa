/**
 * The online model, per quantile, per point (O(1)): a robust Holt baseline
 * fed BASELINE_LAG points late and extrapolated forecasts the point; the
 * residual is standardised by a count-aware noise model and calibrated by
 * the long-run variance of the scores; fast, slow and tail-share CUSUMs
 * raise alarms, whose start is the provisional onset. Confirming an alarm
 * is confirm.ts's job.
 */
import type { DetectorContext } from './context.ts';
import type { MetricState } from './metric-state.ts';
import { medianOf } from './scratch.ts';
import { median, select } from './stats.ts';
import {
  BASELINE_LAG,
  CALIBRATION_MEMORY,
  HOLT_LEVEL_GAIN,
  HOLT_SLOPE_GAIN,
  MAX_SLOPE,
  MIN_BEFORE,
  NEVER,
  NO_THRESHOLD,
  NOISE_MEMORY,
  SLOW_CUSUM_CLIP,
  SLOW_CUSUM_H,
  SPAN_DECAY,
  SPAN_NORM,
  SUSPECT_RUN_SHARE,
  TAIL_CUSUM_H,
  TAIL_QUANTILE,
  TAIL_REFRESH,
  TAIL_WINDOW,
  WINSOR_2SD,
  WINSOR_4SD,
} from './tuning.ts';

/**
 * Update quantile `mi` with point `vi` (already in the ring at `pos`, with
 * corrected value y = ring.y(mi, pos)): noise model,
 * forecast, CUSUMs, baseline, tail share, alarm bookkeeping. False while
 * the quantile is still warming up (nothing else to do for it then).
 */
export function observe(
  d: DetectorContext,
  mi: number,
  vi: number,
  pos: number,
  y: number,
): boolean {
  const s = d.metrics[mi]!;
  const o = d.opts;
  const ring = d.ring;
  const c = ring.count[pos]!;
  const t = ring.time[pos]!;
  if (s.warmPoints < o.warmupPoints) {
    if (s.warmPoints === 0) s.regimeStart = vi;
    s.warmPoints++;
    if (s.warmPoints === o.warmupPoints) initRegime(d, mi, vi - o.warmupPoints + 1, vi, 0);
    return false;
  }

  // Noise model from the first difference with the previous point.
  const pp = (vi - 1) % ring.cap;
  const dy = y - ring.y(mi, pp);
  const u = 1 / c + 1 / ring.count[pp]!;
  const pred = 2 * s.minuteVar + s.perEventVar * u + 2 * d.resolutionVar;
  // Winsorised at 2 sd (and rescaled to stay unbiased for Gaussian noise):
  // robust up to ~20% of wild minutes, e.g. a slow tail showing in some.
  const d2 = Math.min(dy * dy, 4 * pred) / WINSOR_2SD;
  const rho = 1 - 1 / NOISE_MEMORY;
  s.noiseWeight = rho * s.noiseWeight + 1;
  s.noiseSumU = rho * s.noiseSumU + u;
  s.noiseSumUU = rho * s.noiseSumUU + u * u;
  s.noiseSumD2 = rho * s.noiseSumD2 + d2;
  s.noiseSumUD2 = rho * s.noiseSumUD2 + u * d2;
  // The fit moves slowly (memory 128 points): refresh it every few points.
  if ((vi & 7) === 0) solveNoise(s, d.resolutionVar);

  // Forecast, standardise, clip, CUSUM.
  // The baseline runs BASELINE_LAG points behind and is extrapolated to now,
  // so the first points of a step cannot pull it along before the CUSUM has
  // seen them (a fast baseline swallows small steps in sparse series).
  const f = s.level + s.slope * Math.max(0, (t - s.levelT) / 60_000);
  const sigma = Math.sqrt(s.minuteVar + s.perEventVar / c + d.resolutionVar);
  const e = y - f;
  const cl = o.clip;
  // Calibrate: the noise model misses the baseline's own error (shared by
  // many consecutive forecasts) and minute-to-minute correlation (load
  // wanders), and a CUSUM of correlated scores alarms far more often than
  // its threshold promises. Scale by the long-run variance of the residuals
  // at the CUSUM's time scale: the variance of their exponentially weighted
  // sums over ~CALIBRATION_SPAN points, per point.
  const zr0 = e / sigma;
  const zr = zr0 > 4 ? 4 : zr0 < -4 ? -4 : zr0;
  let z = zr / s.calibScale;
  if (z > cl) z = cl;
  else if (z < -cl) z = -cl;
  // (Learn from every point outside a pending alarm: leaving out points
  // where a CUSUM is merely building would leave out the large residuals.)
  if (s.alarm === 0) {
    const g = 1 / CALIBRATION_MEMORY;
    s.calibSum = SPAN_DECAY * s.calibSum + zr;
    s.calibSquare += g * (s.calibSum * s.calibSum - s.calibSquare);
    if ((vi & 7) === 4)
      s.calibScale = Math.min(
        5,
        Math.max(0.8, Math.sqrt((s.calibSquare * SPAN_NORM) / WINSOR_4SD)),
      );
  }
  const k = o.cusumK;
  if (s.fastUp === 0) s.fastUpStart = vi;
  s.fastUp = Math.max(0, s.fastUp + z - k);
  if (s.fastDown === 0) s.fastDownStart = vi;
  s.fastDown = Math.max(0, s.fastDown - z - k);
  // A slower pair for small shifts (half the reference, tighter clip, higher threshold).
  const zs = z > SLOW_CUSUM_CLIP ? SLOW_CUSUM_CLIP : z < -SLOW_CUSUM_CLIP ? -SLOW_CUSUM_CLIP : z;
  if (s.slowUp === 0) s.slowUpStart = vi;
  s.slowUp = Math.max(0, s.slowUp + zs - k / 2);
  if (s.slowDown === 0) s.slowDownStart = vi;
  s.slowDown = Math.max(0, s.slowDown - zs - k / 2);

  // Feed the baseline the point BASELINE_LAG back, unless it belongs to a
  // CUSUM run that is building up or to a pending alarm (a suspected step).
  const h = o.cusumH;
  const j = vi - BASELINE_LAG;
  if (j > s.fedThrough) {
    s.fedThrough = j;
    const suspect =
      (s.alarm !== 0 && j >= s.alarmOnset) ||
      (s.fastUp > SUSPECT_RUN_SHARE * o.cusumH && j >= s.fastUpStart) ||
      (s.fastDown > SUSPECT_RUN_SHARE * o.cusumH && j >= s.fastDownStart) ||
      (s.slowUp > SUSPECT_RUN_SHARE * SLOW_CUSUM_H && j >= s.slowUpStart) ||
      (s.slowDown > SUSPECT_RUN_SHARE * SLOW_CUSUM_H && j >= s.slowDownStart);
    if (!suspect) feedBaseline(d, s, mi, j);
  }

  // Tail share: Bernoulli CUSUMs on "above the regime's upper quantile".
  const brewing = s.alarm !== 0 || s.tailUp > TAIL_CUSUM_H / 2 || s.tailDown > TAIL_CUSUM_H / 2;
  if (!brewing && vi - s.tailThresholdAt >= TAIL_REFRESH && vi - s.regimeStart >= MIN_BEFORE)
    refreshThreshold(d, mi, vi);
  if (s.tailThreshold !== NO_THRESHOLD) {
    const b = y > s.tailThreshold;
    const p0 = s.tailShare < 0.02 ? 0.02 : s.tailShare > 0.3 ? 0.3 : s.tailShare;
    if (Math.abs(p0 - s.tailBaseRate) > 0.002) tailIncrements(s, p0);
    if (s.tailUp === 0) s.tailUpStart = vi;
    s.tailUp = Math.max(0, s.tailUp + (b ? s.tailUpAbove : s.tailUpBelow));
    if (s.tailDown === 0) s.tailDownStart = vi;
    s.tailDown = Math.max(0, s.tailDown + (b ? s.tailDownAbove : s.tailDownBelow));
    if (!brewing) s.tailShare += ((b ? 1 : 0) - s.tailShare) / NOISE_MEMORY;
  }

  // Alarm bookkeeping.
  if (s.alarm !== 0) {
    const run =
      s.alarmSource === 0
        ? s.alarm > 0
          ? s.fastUp
          : s.fastDown
        : s.alarmSource === 1
          ? s.alarm > 0
            ? s.tailUp
            : s.tailDown
          : s.alarm > 0
            ? s.slowUp
            : s.slowDown;
    if (run === 0) s.alarm = 0; // it was a blip
  }
  // Evidence the other way while an alarm is pending: that alarm was drift
  // (the baseline stopped following), the new one may be a step.
  if (
    s.alarm !== 0 &&
    (s.alarm > 0
      ? s.fastDown > h || s.tailDown > TAIL_CUSUM_H
      : s.fastUp > h || s.tailUp > TAIL_CUSUM_H)
  )
    s.alarm = 0;
  if (s.alarm === 0) {
    if (s.fastUp > h || s.fastDown > h) {
      s.alarm = s.fastUp > h ? 1 : -1;
      s.alarmSource = 0;
      s.alarmOnset = s.alarm > 0 ? s.fastUpStart : s.fastDownStart;
    } else if (s.tailUp > TAIL_CUSUM_H || s.tailDown > TAIL_CUSUM_H) {
      s.alarm = s.tailUp > TAIL_CUSUM_H ? 1 : -1;
      s.alarmSource = 1;
      s.alarmOnset = s.alarm > 0 ? s.tailUpStart : s.tailDownStart;
    } else if (s.slowUp > SLOW_CUSUM_H || s.slowDown > SLOW_CUSUM_H) {
      s.alarm = s.slowUp > SLOW_CUSUM_H ? 1 : -1;
      s.alarmSource = 2;
      s.alarmOnset = s.alarm > 0 ? s.slowUpStart : s.slowDownStart;
    }
    if (s.alarm !== 0) {
      s.alarmOnset = Math.max(s.alarmOnset, s.regimeStart + MIN_BEFORE);
      s.nextTest = vi;
      s.alarmTests = 0;
    }
  }
  return true;
}

/** The noise model's per-point sd at the count of point `now`. */
export function noiseSd(d: DetectorContext, mi: number, now: number): number {
  const s = d.metrics[mi]!;
  const c = d.ring.count[now % d.ring.cap]!;
  return Math.sqrt(s.minuteVar + s.perEventVar / c + d.resolutionVar);
}

/** Robust Holt update of the baseline with point j (valid index). */
function feedBaseline(d: DetectorContext, s: MetricState, mi: number, j: number): void {
  const ring = d.ring;
  const pj = j % ring.cap;
  const tj = ring.time[pj]!;
  const f = s.level + s.slope * Math.max(0, (tj - s.levelT) / 60_000);
  const sd = Math.sqrt(s.minuteVar + s.perEventVar / ring.count[pj]! + d.resolutionVar);
  let e = ring.y(mi, pj) - f;
  const lim = d.opts.clip * sd;
  if (e > lim) e = lim;
  else if (e < -lim) e = -lim;
  s.level = f + HOLT_LEVEL_GAIN * e;
  s.slope += HOLT_LEVEL_GAIN * HOLT_SLOPE_GAIN * e;
  if (s.slope > MAX_SLOPE) s.slope = MAX_SLOPE;
  else if (s.slope < -MAX_SLOPE) s.slope = -MAX_SLOPE;
  s.levelT = tj;
}

/** Log-likelihood-ratio increments of the tail-share CUSUMs for base rate p0 (up: ×3 or +0.1, down: ÷4). */
function tailIncrements(s: MetricState, p0: number): void {
  const p1u = Math.min(0.9, Math.max(3 * p0, p0 + 0.1));
  const p1d = p0 / 4;
  s.tailBaseRate = p0;
  s.tailUpAbove = Math.log(p1u / p0);
  s.tailUpBelow = Math.log((1 - p1u) / (1 - p0));
  s.tailDownAbove = Math.log(p1d / p0);
  s.tailDownBelow = Math.log((1 - p1d) / (1 - p0));
}

/** The regime's upper quantile over its last TAIL_WINDOW points, plus the reporting margin. */
function refreshThreshold(d: DetectorContext, mi: number, vi: number): void {
  const s = d.metrics[mi]!;
  const from = Math.max(s.regimeStart, vi - TAIL_WINDOW, vi - d.ring.cap + 1);
  const ys = d.ring.rangeY(mi, from, vi - 1, 0);
  s.tailThreshold =
    select(ys, Math.min(ys.length - 1, Math.floor(TAIL_QUANTILE * ys.length))) + d.logMinRatio;
  s.tailThresholdAt = vi;
}

function solveNoise(s: MetricState, resolutionVar: number): void {
  const mu = s.noiseSumU / s.noiseWeight;
  const md = s.noiseSumD2 / s.noiseWeight;
  const varU = s.noiseSumUU / s.noiseWeight - mu * mu;
  const q2x2 = 2 * resolutionVar;
  let a: number;
  let tau2: number;
  if (varU > 0.05 * mu * mu) {
    // E[d²] = 2τ² + A·u (+ resolution): ordinary least squares in the decayed sums.
    a = (s.noiseSumUD2 / s.noiseWeight - mu * md) / varU;
    tau2 = (md - q2x2 - a * mu) / 2;
    if (a < 0) {
      a = 0;
      tau2 = (md - q2x2) / 2;
    } else if (tau2 < 0) {
      tau2 = 0;
      a = (md - q2x2) / mu;
    }
  } else {
    // Counts barely vary: attribute the noise to sampling (conservative when counts later drop).
    tau2 = 0;
    a = (md - q2x2) / mu;
  }
  s.perEventVar = a > 0 ? a : 0;
  s.minuteVar = tau2 > 0 ? tau2 : 0;
}

/** Start a regime on points [from, to] (valid indices) already in the ring. */
export function initRegime(
  d: DetectorContext,
  mi: number,
  from: number,
  to: number,
  keepSlope: number,
): void {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  s.level = medianOf(ring.rangeY(mi, from, to, 1));
  s.slope = keepSlope;
  s.levelT = ring.time[to % ring.cap]!;
  s.fedThrough = to;
  s.regimeStart = from;
  s.fastUp = s.fastDown = s.slowUp = s.slowDown = 0;
  s.fastUpStart = s.fastDownStart = s.slowUpStart = s.slowDownStart = to + 1;
  s.tailUp = s.tailDown = 0;
  s.tailUpStart = s.tailDownStart = to + 1;
  s.tailThreshold = NO_THRESHOLD;
  s.tailThresholdAt = NEVER;
  s.alarm = 0;
  if (s.noiseWeight === 0 && to > from) {
    // First regime: seed the noise model from the median absolute first difference.
    const ad: number[] = [];
    let su = 0;
    for (let v = from + 1; v <= to; v++) {
      const p = v % ring.cap;
      const q = (v - 1) % ring.cap;
      ad.push(Math.abs(ring.y(mi, p) - ring.y(mi, q)));
      su += 1 / ring.count[p]! + 1 / ring.count[q]!;
    }
    const n = ad.length;
    const sdD = median(ad) / 0.6745; // sd of a difference
    const mu = su / n;
    const d2 = Math.max(sdD * sdD, 2 * d.resolutionVar);
    s.noiseWeight = n;
    s.noiseSumU = n * mu;
    s.noiseSumUU = n * mu * mu;
    s.noiseSumD2 = n * d2;
    s.noiseSumUD2 = n * mu * d2;
    solveNoise(s, d.resolutionVar);
  } else {
    // Later regimes: keep the noise model but let the new level's data take over quickly.
    const shrink = 0.25;
    s.noiseWeight *= shrink;
    s.noiseSumU *= shrink;
    s.noiseSumUU *= shrink;
    s.noiseSumD2 *= shrink;
    s.noiseSumUD2 *= shrink;
  }
}
