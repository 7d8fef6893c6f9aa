/**
 * Young series: a step in a series' first SHORT_HISTORY points, tested at a
 * fixed few sizes of its after window instead of at every point.
 *
 * A rank test over so few points has a floor: 10 points before and 6 after,
 * perfectly separated, give p = 1/C(16, 6) = 1.2e-4 (3.7e-4 over the three
 * split tests). The alarm path tests a young jump at every point, and each
 * retest multiplies the p-value (Bonferroni), so by the 6th point after the
 * change it stands at ~2e-3, over the young series' SHORT_ALPHA: a ×2–5
 * step in a 16–20-point series was never confirmed. Here the pending
 * alarm's onset is tested once when YOUNG_AFTER[0] points follow it and once
 * at YOUNG_AFTER[1], a budget of its own (SHORT_ALPHA over the sizes), with
 * the same split tests (margin included) and the same gate as the alarm
 * path's young rule: the levels either side at least SHORT_CLEAR_SD noise
 * sds apart, the noise model's sd for this minute's event count (a minute
 * of 5 events counts for what 5 events can show). An onset past the
 * SHORT_HISTORY-th point (still the series' first regime, before
 * YOUNG_LATE_HISTORY) is tested the same way at YOUNG_LATE_AFTER points,
 * against the usual alpha.
 */
import { clearStep } from './confirm.ts';
import type { DetectorContext } from './context.ts';
import { localise } from './localise.ts';
import { report } from './report.ts';
import { testSplit } from './split-tests.ts';
import { MIN_BEFORE, SHORT_ALPHA, SHORT_HISTORY } from './tuning.ts';
import type { StepChange } from './types.ts';

/** Sizes of the after window (points from the alarm's onset to now, inclusive) at which it is tested. */
export const YOUNG_AFTER: readonly number[] = [6, 10];
/** For an onset between SHORT_HISTORY and YOUNG_LATE_HISTORY (usual alpha): 24 points before and 8 after, perfectly separated, give 1/C(32, 8) = 1e-7. */
export const YOUNG_LATE_AFTER: readonly number[] = [8, 12];
export const YOUNG_LATE_HISTORY = 60;

/** The young-series check of quantile `mi` at point `now`: a change, or null. */
export function youngCheck(d: DetectorContext, mi: number, now: number): StepChange | null {
  const s = d.metrics[mi]!;
  if (s.alarm === 0 || s.regimeStart !== 0) return null;
  const onset = s.alarmOnset;
  if (onset - s.regimeStart < MIN_BEFORE || onset >= YOUNG_LATE_HISTORY) return null;
  // Past SHORT_HISTORY points the usual alpha applies, so the after window needs more points.
  const late = onset >= SHORT_HISTORY;
  const sizes = late ? YOUNG_LATE_AFTER : YOUNG_AFTER;
  if (!sizes.includes(now - onset + 1)) return null;
  const dir = s.alarm;
  const test = testSplit(d, mi, dir, onset, now, true);
  const p = Number.isNaN(test.p) ? 1 : Math.min(1, test.p * sizes.length);
  if (!(p < (late ? d.opts.alpha : SHORT_ALPHA)) || !clearStep(d, mi, dir, onset, now)) return null;
  const { split, unc } = localise(d, mi, dir, { ...test, p, onset }, now, -Infinity, true);
  return report(d, mi, dir, split, now, unc, p);
}
