/**
 * Confirming an alarm: the split tests at the candidate onsets (Bonferroni
 * over candidates and retests), retests on a geometric schedule while the
 * evidence builds, and a write-off as drift when none comes.
 */
import type { DetectorContext } from './context.ts';
import { jumpOwnStart, largeStepP, type JumpRun } from './jump.ts';
import { localise } from './localise.ts';
import { initRegime, noiseSd } from './model.ts';
import { medianOf } from './scratch.ts';
import { report } from './report.ts';
import { SEGMENT_DOWN_UNC, segmentedDrop, segmentedOnset } from './segment-down.ts';
import { testSplit, type SplitTest } from './split-tests.ts';
import {
  FAST_RETEST_P,
  INNER_SPLIT_AFTER,
  JUMP_FRESH,
  MIN_AFTER,
  MIN_BEFORE,
  PROMISING_P,
  RETEST_GROWTH,
  SHORT_ALPHA,
  SHORT_CLEAR_SD,
  SHORT_HISTORY,
  TAIL_CUSUM_H,
} from './tuning.ts';
import type { StepChange } from './types.ts';

/** Test the pending alarm of quantile `mi` at point `now`: a change, or null (retest later or written off). */
export function tryConfirm(
  d: DetectorContext,
  mi: number,
  now: number,
  jump: JumpRun | null = null,
): StepChange | null {
  const s = d.metrics[mi]!;
  const o = d.opts;
  const dir = s.alarm;
  // The level CUSUM and the tail-share CUSUM may date the onset differently
  // (a sparse tail shows up as scattered slow minutes): try both.
  const tailHalf = TAIL_CUSUM_H / 2;
  const levelHalf = o.cusumH / 2;
  const otherRun =
    s.alarmSource !== 1
      ? dir > 0
        ? s.tailUp > tailHalf
          ? s.tailUpStart
          : -1
        : s.tailDown > tailHalf
          ? s.tailDownStart
          : -1
      : dir > 0
        ? s.fastUp > levelHalf
          ? s.fastUpStart
          : -1
        : s.fastDown > levelHalf
          ? s.fastDownStart
          : -1;
  // A long-pending alarm (a slow drift the baseline stopped following) may
  // have a real step arrive inside it: also try the best split since the
  // alarm's onset.
  const candidates = [s.alarmOnset];
  if (otherRun >= 0) candidates.push(Math.max(otherRun, s.regimeStart + MIN_BEFORE));
  // A young run of jumps in the alarm's direction: its first point (the
  // minute the step began in, when it already moved that minute).
  const young = jump !== null && jump.dir === dir && jump.points <= JUMP_FRESH;
  if (young) candidates.push(Math.max(jump.start, s.regimeStart + MIN_BEFORE));
  if (now - s.alarmOnset + 1 >= INNER_SPLIT_AFTER) {
    const inner = localise(
      d,
      mi,
      dir,
      { p: 0, tail: false, theta: 0, onset: s.alarmOnset },
      now,
      s.alarmOnset + 1,
    ).split;
    candidates.push(inner);
  }
  let test: SplitTest | null = null;
  let pmin = 1;
  let tried = 0;
  for (const onset of candidates) {
    if (candidates.indexOf(onset) !== tried++) continue; // duplicate
    const t = testSplit(d, mi, dir, onset, now, true);
    const pt = Number.isNaN(t.p) ? 1 : t.p;
    if (!test || pt < pmin) {
      test = t;
      pmin = pt;
    }
  }
  test = test!;
  test.p = Math.min(1, pmin * new Set(candidates).size);
  // Each retest of the same alarm spends more of its error budget.
  s.alarmTests++;
  test.p = Math.min(1, test.p * s.alarmTests);
  const waited = now - s.alarmOnset + 1;
  // A young series (its first regime, fewer than SHORT_HISTORY points
  // before the onset) cannot reach alpha: 10 points before and 10 after,
  // perfectly separated, give p = 5e-6 before the penalties.
  const alpha =
    s.regimeStart === 0 && test.onset < SHORT_HISTORY && clearStep(d, mi, dir, test.onset, now)
      ? Math.max(o.alpha, SHORT_ALPHA)
      : o.alpha;
  if (!(test.p < alpha) && young && jump.points >= 3) {
    // Too few points for the rank tests' penalties, but maybe a very large, tight step.
    const p = largeStepP(d, mi, dir, now);
    if (p < alpha) test = { p, tail: false, theta: 0, onset: now - 2 };
  }
  if (!(test.p < alpha)) {
    // No sign of a step at all after a while, or waited long enough: drift.
    // Evidence still building (a quiet series' small or tail step): keep waiting up to a full window.
    const promising = test.p < PROMISING_P && waited < o.maxAfterPoints;
    const writeOff =
      !young && ((waited >= maxWait(d, mi, now) && !promising) || (test.p > 0.9 && waited >= 24));
    if (dir < 0 && (writeOff || (s.regimeStart === 0 && s.alarmOnset < SHORT_HISTORY))) {
      // A step down the rank tests cannot see (a noisy or seasonal series' margin, a young
      // series' few points): the segmentation may (segment-down.ts). Improvements never page.
      const split = segmentedDrop(d, mi, s.alarmOnset, now);
      if (split >= 0) return report(d, mi, dir, split, now, SEGMENT_DOWN_UNC, o.alpha);
    }
    if (writeOff) {
      // Never confirmed: a drift or a shift too small to report. Re-anchor,
      // keeping the regime's history so later tests still see a full window.
      const regimeStart = s.regimeStart;
      initRegime(d, mi, Math.max(s.alarmOnset, now - 9), now, s.slope);
      s.regimeStart = regimeStart;
    } else {
      // A near miss at an onset late in a long run (a large step after a
      // wander, short of points after it) is retested on the schedule of its
      // own points: its 4th point is next minute, not half the run later.
      const fresh = now - test.onset + 1;
      const since =
        test.p < FAST_RETEST_P && fresh < waited && fresh < MIN_AFTER + 3 ? fresh : waited;
      s.nextTest = young ? now + 1 : now + Math.max(1, Math.floor(since / RETEST_GROWTH));
    }
    return null;
  }

  let { split, unc } = localise(d, mi, dir, test, now, -Infinity, true);
  if (
    young &&
    jump.points < MIN_AFTER &&
    jumpOwnStart(d, mi, dir, split, jump.start, now) > split
  ) {
    // Confirmed on a jump's first points but dated before it, where what came before looks like a
    // smaller level of its own (another job's load): wait the minute or two until the jump has
    // the points to date it on (below), rather than open the step at the load.
    s.nextTest = now + 1;
    return null;
  }
  if (young && jump.points >= MIN_AFTER) {
    // Confirmed while a jump is young: a smaller move before it (a drift, load) is not its onset.
    // (Not on fewer points than a split needs after it: one wild minute is no level.)
    const own = jumpOwnStart(d, mi, dir, split, jump.start, now);
    if (own > split)
      ({ split, unc } = localise(d, mi, dir, { ...test, onset: own }, now, own, true));
  }
  // A step down (never paged) is dated by the segmentation's boundary (segment-down.ts).
  if (dir < 0) split = segmentedOnset(d, mi, split, unc, now);
  return report(d, mi, dir, split, now, unc, test.p);
}

/**
 * Levels either side of `onset` at least SHORT_CLEAR_SD noise sds apart (in
 * direction dir): what a young series must show before its looser alpha applies.
 */
export function clearStep(
  d: DetectorContext,
  mi: number,
  dir: number,
  onset: number,
  now: number,
): boolean {
  const s = d.metrics[mi]!;
  if (onset - s.regimeStart < MIN_BEFORE || now - onset < 2) return false;
  const mB = medianOf(d.ring.rangeY(mi, s.regimeStart, onset - 1, 1));
  const mA = medianOf(d.ring.rangeY(mi, onset, now, 2));
  return dir * (mA - mB) >= SHORT_CLEAR_SD * noiseSd(d, mi, now);
}

/**
 * How long an alarm may wait for confirmation: about the points a rank test
 * needs to see a minRatio step through this series' noise. A quiet series
 * (thousands of events a minute) confirms a real step within a few points,
 * so a long wait there would only let a slow drift accumulate into a "step".
 */
function maxWait(d: DetectorContext, mi: number, now: number): number {
  const s = d.metrics[mi]!;
  const c = d.ring.count[now % d.ring.cap]!;
  const sd = Math.sqrt(s.minuteVar + s.perEventVar / c + d.resolutionVar);
  const r = (5 * sd) / Math.max(d.logMinRatio, 1e-3);
  return Math.min(d.opts.maxAfterPoints, Math.max(12, Math.round(8 + 2 * r * r)));
}
