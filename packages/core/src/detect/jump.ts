/**
 * Large steps, fast. The level CUSUMs clip each score (a wild minute must
 * not alarm on its own), so even a ×10 step needs 4 points to alarm, more
 * where the calibration scales scores down; and an alarm pending since
 * before the step is retested on its own schedule. A run of points each far
 * beyond the forecast (a jump) raises the alarm at once, dated at the run's
 * first point, and is tested at every point while it is young; and a very
 * large, tight step is confirmed on 3 points (largeStepP) instead of the 4 a
 * rank test with Bonferroni penalties needs.
 */
import type { DetectorContext } from './context.ts';
import { binomial } from './stats.ts';
import { medianOf } from './scratch.ts';
import { JUMP_LOOKBACK, JUMP_RATIO, JUMP_SD, LARGE_RATIO, LARGE_SPREAD } from './tuning.ts';

/** The current run of jump points ending at `now`: its direction, first point and length. */
export interface JumpRun {
  dir: number;
  start: number;
  points: number;
}

/**
 * Is point v a jump in direction dir: beyond the forecast by at least
 * JUMP_SD calibrated noise sds and by a factor JUMP_RATIO? (The baseline
 * runs BASELINE_LAG points behind, so a step's first points do not move it.)
 */
function isJump(d: DetectorContext, mi: number, v: number, dir: number): boolean {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const pos = v % ring.cap;
  const f = s.level + s.slope * Math.max(0, (ring.time[pos]! - s.levelT) / 60_000);
  const e = dir * (ring.y(mi, pos) - f);
  const sd = Math.sqrt(s.minuteVar + s.perEventVar / ring.count[pos]! + d.resolutionVar);
  return e >= Math.log(JUMP_RATIO) && e >= JUMP_SD * sd * s.calibScale;
}

/** The run of jumps ending at `now` (at most JUMP_LOOKBACK points back, within the regime), or null. */
export function jumpRun(d: DetectorContext, mi: number, now: number): JumpRun | null {
  const s = d.metrics[mi]!;
  const lowest = Math.max(s.regimeStart, now - JUMP_LOOKBACK + 1, now - d.ring.cap + 1);
  for (const dir of [1, -1]) {
    if (!isJump(d, mi, now, dir)) continue;
    let start = now;
    while (start - 1 >= lowest && isJump(d, mi, start - 1, dir)) start--;
    return { dir, start, points: now - start + 1 };
  }
  return null;
}

/**
 * A very large step on its last 3 points: each beyond every point of the
 * history (up to beforePoints) by minRatio, their median LARGE_RATIO beyond
 * the history's median, and spread less than LARGE_SPREAD of that step (a new
 * level, not a few wild minutes). Its p-value is that of the one rank
 * configuration it requires, 1 / C(nB + 3, 3): below alpha (1e-5) from ~85
 * points of history. 1 when the step is not that clear.
 */
export function largeStepP(d: DetectorContext, mi: number, dir: number, now: number): number {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const onset = now - 2;
  const from = Math.max(s.regimeStart, onset - d.opts.beforePoints, now - ring.cap + 1);
  const nB = onset - from;
  if (nB < 8) return 1;
  const yB = ring.rangeY(mi, from, onset - 1, 1);
  const yA = ring.rangeY(mi, onset, now, 2);
  let edge = -Infinity;
  for (const y of yB) edge = Math.max(edge, dir * y);
  let lo = Infinity;
  let hi = -Infinity;
  for (const y of yA) {
    lo = Math.min(lo, dir * y);
    hi = Math.max(hi, dir * y);
  }
  if (lo - edge < d.logMinRatio) return 1;
  const step = dir * (medianOf(yA) - medianOf(yB));
  if (step < Math.log(LARGE_RATIO) || hi - lo > LARGE_SPREAD * step) return 1;
  return 1 / binomial(nB + 3, 3);
}
