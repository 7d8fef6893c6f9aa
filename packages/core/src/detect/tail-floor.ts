/**
 * Tail floors: a p99 that stops reaching low (its lower part moves up) even
 * when its median barely moves — the delayed-ACK shape (a share of calls
 * that hit a noisy slow path, p99 wandering ~24–98 ms, now wait a ~40 ms
 * timer: p99 steady at ~50–65 ms) and p99 steps where a slower share of
 * calls shows in most minutes but the minute-to-minute p99 is too noisy for
 * the level tests.
 *
 * Every FLOOR_EVERY points (16: each check sorts ~5 windows of up to 216
 * points, so it runs half as often as the cheaper paths), for after-windows of FLOOR_AFTER points ending
 * now, the p99s of the window (shifted down by minRatio: the margin) are
 * compared with up to FLOOR_BEFORE points before it in the regime by an
 * exact exceedance count (Gumbel–von Schelling, as the exceedance tests):
 * how few of them fall at or below the FLOOR_SHARE lower quantile of the
 * before points. Bonferroni over the windows and FLOOR_PENALTY for the
 * repetition; only where the before window's own lower part held still
 * (its halves' floors within half the margin: a daily cycle's rise is not a
 * floor) and the after median is not below the before median. The onset is
 * the split within FLOOR_LOCALISE points of the window's start that gives
 * the smallest p-value.
 */
import type { DetectorContext } from './context.ts';
import { report } from './report.ts';
import { scratch } from './scratch.ts';
import { exceedanceSorted } from './stats.ts';
import type { StepChange } from './types.ts';

export const FLOOR_EVERY = 16;
export const FLOOR_AFTER: readonly number[] = [24, 32, 48, 64, 96];
export const FLOOR_BEFORE = 120;
export const FLOOR_MIN_BEFORE = 60;
export const FLOOR_SHARE = 0.3;
export const FLOOR_PENALTY = 20;
export const FLOOR_LOCALISE = 8;
/** A window's p-value above which its other gates are not read (they cost two more sorts). */
export const FLOOR_SCREEN_P = 0.05;

const P99 = 1;

/** The periodic floor test of the p99 at point `now`: a change, or null. */
export function floorCheck(d: DetectorContext, now: number): StepChange | null {
  const s = d.metrics[P99]!;
  if (s.warmPoints < d.opts.warmupPoints) return null;
  const oldest = Math.max(s.regimeStart, now - d.ring.cap + 1);
  let best = 1;
  let bestSplit = -1;
  for (const m of FLOOR_AFTER) {
    const split = now - m + 1;
    if (split - oldest < FLOOR_MIN_BEFORE) break;
    const p = floorTest(d, split, now);
    if (p < best) {
      best = p;
      bestSplit = split;
    }
  }
  if (bestSplit < 0 || best * FLOOR_AFTER.length * FLOOR_PENALTY >= d.opts.alpha) return null;
  // Localise: the split near the window's start with the smallest p-value.
  let split = bestSplit;
  for (let k = bestSplit - FLOOR_LOCALISE; k <= bestSplit + FLOOR_LOCALISE; k++) {
    if (k - oldest < FLOOR_MIN_BEFORE || now - k + 1 < FLOOR_AFTER[0]!) continue;
    const p = floorTest(d, k, now);
    if (p < best) {
      best = p;
      split = k;
    }
  }
  return report(d, P99, 1, split, now, FLOOR_LOCALISE, best);
}

/** p-value of "the p99's floor rose by at least minRatio at `split`" (1 where the gates fail). */
function floorTest(d: DetectorContext, split: number, now: number): number {
  const ring = d.ring;
  const s = d.metrics[P99]!;
  const from = Math.max(s.regimeStart, split - FLOOR_BEFORE, now - ring.cap + 1);
  const n = split - from;
  const m = now - split + 1;
  // Sorted in place in their scratch slots (4-5: sorted copies).
  const before = ring.rangeY(P99, from, split - 1, 4).sort();
  const after = ring.rangeY(P99, split, now, 5).sort();
  const q = (a: Float64Array, f: number) => a[Math.min(a.length - 1, Math.floor(f * a.length))]!;
  // The after median not below the before median (a floor under a lower level is no regression).
  if (q(after, 0.5) < q(before, 0.5)) return 1;
  // Few after points (less the margin) at or below the before's lower FLOOR_SHARE quantile:
  // mirrored, that is few at or above the r-th largest of the mirrored before points.
  const r = Math.max(1, Math.round(FLOOR_SHARE * n));
  const negA = scratch(6, m);
  for (let i = 0; i < m; i++) negA[i] = -(after[m - 1 - i]! - d.logMinRatio);
  const negB = scratch(7, n);
  for (let i = 0; i < n; i++) negB[i] = -before[n - 1 - i]!;
  const p = exceedanceSorted(negA, negB, r, -1);
  if (p > FLOOR_SCREEN_P) return p;
  // The before window's lower part held still.
  const half = n >> 1;
  const b1 = ring.rangeY(P99, from, from + half - 1, 4).sort();
  const b2 = ring.rangeY(P99, from + half, split - 1, 5).sort();
  if (Math.abs(q(b1, FLOOR_SHARE) - q(b2, FLOOR_SHARE)) > d.logMinRatio / 2) return 1;
  return p;
}
