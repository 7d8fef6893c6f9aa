/**
 * New extremes: a slow tail that shows in only some minutes of a sparse
 * series (a minute's "p99" of 3 events is their maximum, so a slower 5% of
 * events shows in ~15% of the minutes) moves neither the level nor, within
 * a 120-point history, any rank test far enough. Against a long history
 * (up to EXTREMES_BLOCKS blocks of EXTREMES_BLOCK_POINTS points, kept as
 * each block's top two values) a handful of minutes beyond its second
 * largest value is significant: the number of m new points above the r-th
 * largest of N exchangeable ones has the Gumbel-von Schelling distribution.
 * The threshold (the history's second largest value plus EXTREMES_MARGIN,
 * ×4: beyond what spikes and heavy tails did) is frozen from the first
 * exceedance on; every new exceedance tests each earlier one as the onset,
 * Bonferroni over onsets and rounds.
 */
import type { DetectorContext } from './context.ts';
import type { MetricState } from './metric-state.ts';
import { noiseSd } from './model.ts';
import { report } from './report.ts';
import { gvsUpper } from './stats.ts';
import {
  EXTREMES_BLOCK_POINTS,
  EXTREMES_BLOCKS,
  EXTREMES_EPISODE_POINTS,
  EXTREMES_MARGIN,
  EXTREMES_MIN_EXCEEDANCES,
  EXTREMES_MIN_HISTORY,
  EXTREMES_MIN_SD,
  MIN_BEFORE,
  NO_THRESHOLD,
  round6,
} from './tuning.ts';
import type { StepChange } from './types.ts';

/** Track point `vi` (corrected value y) of quantile `mi` against the long history; a change when its exceedances confirm one. */
export function extremes(d: DetectorContext, mi: number, vi: number, y: number): StepChange | null {
  const s = d.metrics[mi]!;
  const o = d.opts;
  if (s.warmPoints < o.warmupPoints) return null;
  // Drop what belongs to an earlier regime.
  if (s.openStart < s.regimeStart) {
    s.openStart = vi;
    s.openPoints = 0;
    s.openTop1 = s.openTop2 = -NO_THRESHOLD;
  }
  while (s.blockStart.length && s.blockStart[0]! < s.regimeStart) {
    s.blockStart.shift();
    s.blockPoints.shift();
    s.blockTop1.shift();
    s.blockTop2.shift();
    s.extremeThreshold = NO_THRESHOLD;
  }
  while (
    s.exceedances.length &&
    (s.exceedances[0]! < s.regimeStart || s.exceedances[0]! <= vi - EXTREMES_EPISODE_POINTS)
  )
    s.exceedances.shift();
  if (!s.exceedances.length) s.extremeRounds = 0;
  let out: StepChange | null = null;
  if (
    s.extremeThreshold !== NO_THRESHOLD &&
    y > s.extremeThreshold &&
    s.extremeHistory >= EXTREMES_MIN_HISTORY
  ) {
    s.exceedances.push(vi);
    if (s.exceedances.length >= EXTREMES_MIN_EXCEEDANCES && noiseSd(d, mi, vi) >= EXTREMES_MIN_SD)
      out = testExtremes(d, mi, vi);
  }
  if (out) return out;
  // The open block.
  if (y > s.openTop1) {
    s.openTop2 = s.openTop1;
    s.openTop1 = y;
  } else if (y > s.openTop2) s.openTop2 = y;
  if (++s.openPoints >= EXTREMES_BLOCK_POINTS) {
    s.blockStart.push(s.openStart);
    s.blockPoints.push(s.openPoints);
    s.blockTop1.push(round6(s.openTop1));
    s.blockTop2.push(round6(s.openTop2));
    if (s.blockStart.length > EXTREMES_BLOCKS) {
      s.blockStart.shift();
      s.blockPoints.shift();
      s.blockTop1.shift();
      s.blockTop2.shift();
    }
    s.openStart = vi + 1;
    s.openPoints = 0;
    s.openTop1 = s.openTop2 = -NO_THRESHOLD;
    if (!s.exceedances.length) setThreshold(d, s);
  }
  return null;
}

/** The second largest value of the closed blocks (plus the margin) and their size. */
function setThreshold(d: DetectorContext, s: MetricState): void {
  let n = 0;
  let t1 = -NO_THRESHOLD;
  let t2 = -NO_THRESHOLD;
  for (let b = 0; b < s.blockStart.length; b++) {
    n += s.blockPoints[b]!;
    const v1 = s.blockTop1[b]!;
    const v2 = s.blockTop2[b]!;
    if (v1 > t1) {
      t2 = Math.max(t1, v2);
      t1 = v1;
    } else if (v1 > t2) t2 = v1;
  }
  s.extremeHistory = n;
  s.extremeThreshold =
    n < EXTREMES_MIN_HISTORY ? NO_THRESHOLD : t2 + Math.max(d.logMinRatio, EXTREMES_MARGIN);
}

function testExtremes(d: DetectorContext, mi: number, now: number): StepChange | null {
  const s = d.metrics[mi]!;
  const e = s.exceedances;
  const K = e.length;
  s.extremeRounds++;
  let best = 1;
  let bestJ = -1;
  let bestQ = 0;
  for (let k = 0; k <= K - EXTREMES_MIN_EXCEEDANCES; k++) {
    const j = e[k]!;
    // Points after the candidate onset and exceedances among them (the onset's own is the condition).
    const m = now - j;
    const x = K - 1 - k;
    if (m < 1 || x < EXTREMES_MIN_EXCEEDANCES - 1) continue;
    const p = gvsUpper(s.extremeHistory, 2, m, x);
    if (p < best) {
      best = p;
      bestJ = j;
      bestQ = (x + 1) / (m + 1);
    }
  }
  const p = Math.min(1, best * K * s.extremeRounds);
  if (!(p < d.opts.alpha) || bestJ < 0) return null;
  // The first exceedance comes a geometric wait after the step (a share q
  // of the new minutes exceed): the onset's posterior (flat prior) decays
  // from it backwards as (1 - q)^d; report its median, and the 95% width.
  const lq = Math.log(1 - Math.min(0.9, Math.max(0.02, bestQ)));
  const back = Math.max(0, Math.ceil(Math.log(0.5) / lq) - 1);
  const unc = Math.ceil(Math.log(0.05) / lq);
  const prev = previousExceedance(s, bestJ);
  const split = Math.max(bestJ - back, prev + 1, s.regimeStart + MIN_BEFORE, now - d.ring.cap + 2);
  s.exceedances = [];
  s.extremeRounds = 0;
  return report(d, mi, 1, split, now, unc, p);
}

/** The exceedance before j in the episode (or -1). */
function previousExceedance(s: MetricState, j: number): number {
  let prev = -1;
  for (const e of s.exceedances) if (e < j) prev = e;
  return prev;
}
