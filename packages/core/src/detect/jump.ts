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
import {
  JUMP_HISTORY,
  JUMP_LOOKBACK,
  JUMP_MARGIN,
  JUMP_RATIO,
  JUMP_SD,
  LARGE_RATIO,
  LARGE_SPREAD,
  MIN_BEFORE,
} from './tuning.ts';

/** The current run of jump points ending at `now`: its direction, first point and length. */
export interface JumpRun {
  dir: number;
  start: number;
  points: number;
}

/** dir × (point v − the forecast for it), in log units. (The baseline runs BASELINE_LAG points behind, so a step's first points do not move it.) */
function excess(d: DetectorContext, mi: number, v: number, dir: number): number {
  const s = d.metrics[mi]!;
  const pos = v % d.ring.cap;
  const f = s.level + s.slope * Math.max(0, (d.ring.time[pos]! - s.levelT) / 60_000);
  return dir * (d.ring.y(mi, pos) - f);
}

/**
 * The run of jumps ending at `now` (at most JUMP_LOOKBACK points back, within
 * the regime), or null. A jump is a point at least JUMP_RATIO beyond the
 * forecast and either JUMP_SD calibrated noise sds beyond it or JUMP_MARGIN
 * beyond every point of the JUMP_HISTORY before the run (where load wander
 * inflated the calibration, a step outside anything seen lately still
 * counts). Only points JUMP_RATIO beyond the forecast (rare) cost more than
 * O(1).
 */
export function jumpRun(d: DetectorContext, mi: number, now: number): JumpRun | null {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const minJump = Math.log(JUMP_RATIO);
  const lowest = Math.max(s.regimeStart, now - JUMP_LOOKBACK + 1, now - ring.cap + 1);
  for (const dir of [1, -1]) {
    if (excess(d, mi, now, dir) < minJump) continue;
    let first = now;
    while (first - 1 >= lowest && excess(d, mi, first - 1, dir) >= minJump) first--;
    let edge = Infinity;
    const from = Math.max(s.regimeStart, first - JUMP_HISTORY, now - ring.cap + 1);
    if (first - from >= MIN_BEFORE) {
      edge = -Infinity;
      for (let v = from; v < first; v++) edge = Math.max(edge, dir * ring.y(mi, v % ring.cap));
    }
    const isJump = (v: number) => {
      const pos = v % ring.cap;
      if (dir * ring.y(mi, pos) >= edge + JUMP_MARGIN) return true;
      const sd = Math.sqrt(s.minuteVar + s.perEventVar / ring.count[pos]! + d.resolutionVar);
      return excess(d, mi, v, dir) >= JUMP_SD * sd * s.calibScale;
    };
    if (!isJump(now)) return null;
    let start = now;
    while (start - 1 >= first && isJump(start - 1)) start--;
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

/**
 * Where a step confirmed while a young jump was under way began, when the
 * localised split lies before the jump's first point: a smaller move before
 * the jump (a drift, another job's load) is not the jump's onset. Walking
 * back from the jump's first point, a point still counts as the step's while
 * it is past the midpoint between the level before `split` and the jump's
 * own level (the change's half-new minute does); the first one that is not
 * ends the walk. The points left between `split` and there must be a smaller
 * level of their own: none both past the midpoint and within JUMP_RATIO of
 * the jump's level, and their median JUMP_RATIO short of it; otherwise (or
 * when every point between is at the new level) the step began at `split`.
 * (confirm.ts waits for MIN_AFTER jump points before dating such a step.)
 */
export function jumpOwnStart(
  d: DetectorContext,
  mi: number,
  dir: number,
  split: number,
  jumpStart: number,
  now: number,
): number {
  if (split >= jumpStart) return split;
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const from = Math.max(s.regimeStart, split - d.opts.beforePoints, now - ring.cap + 1);
  if (split - from < MIN_BEFORE) return split;
  const before = medianOf(ring.rangeY(mi, from, split - 1, 1));
  const after = medianOf(ring.rangeY(mi, jumpStart, now, 2));
  const mid = (before + after) / 2;
  const past = (v: number) => dir * (ring.y(mi, v % ring.cap) - mid) > 0;
  let start = jumpStart;
  while (start - 1 >= split && past(start - 1)) start--;
  // Only a level of its own: one point earlier past the midpoint and at the jump's own level
  // (within JUMP_RATIO of it: a sparse tail showing in some minutes since `split`) says the step
  // began at `split` and the jump is its later part. Points past the midpoint but JUMP_RATIO short
  // of the jump (a tail that rose with another job's load before the change) are not.
  if (start === split) return split;
  const atJump = (v: number) => dir * (after - ring.y(mi, v % ring.cap)) < Math.log(JUMP_RATIO);
  for (let v = split; v < start; v++) if (past(v) && atJump(v)) return split;
  // ... and the jump a jump from it too (JUMP_RATIO), not the same step's noisier minutes.
  const between = medianOf(ring.rangeY(mi, split, start - 1, 1));
  return dir * (after - between) >= Math.log(JUMP_RATIO) ? start : split;
}
