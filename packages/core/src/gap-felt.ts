/**
 * A gap view (the time between a caller's call and the callee's handling) is
 * a part of the caller's latency, not a latency anyone waits for on its own.
 * A step in it opens a regression only when the caller feels it: its edge's
 * client view moved by at least the smallest step Onset reports (MIN_RATIO)
 * around the gap's onset, per-minute medians of the step's quantile before
 * and after (docs/regressions.md "A gap the caller does not feel"). Else it is
 * context: it still joins an incident of its edge, it never opens one. A
 * caller's machine slowing its wake-ups by half a millisecond moves the gap
 * ×1.4 at p99 and the caller's own latency ×1.05.
 */
import { MIN_RATIO } from './detect/view-options.ts';
import { summarizeView } from './edges.ts';

/** How far before the gap's onset the client view's level is read. */
export const GAP_FELT_BEFORE_MS = 60 * 60_000;
/** Fewest minutes with calls on each side to judge; with fewer the gap is taken as felt. */
export const GAP_FELT_MIN_POINTS = 3;

/**
 * Whether the client view's per-minute quantile (`values` at `t`, ms) rose
 * by MIN_RATIO or more from before `onsetMs` to after it. Too few points on
 * either side: true (the gap's own step decides, as before this rule).
 */
export function callerFeelsGap(
  t: readonly number[],
  values: ReadonlyArray<number | null | undefined>,
  onsetMs: number,
): boolean {
  const n = (after: boolean) =>
    t.filter((x, i) => x >= onsetMs === after && Number.isFinite(values[i] ?? NaN)).length;
  if (n(false) < GAP_FELT_MIN_POINTS || n(true) < GAP_FELT_MIN_POINTS) return true;
  const s = summarizeView(t, values, onsetMs);
  if (!s.before_ms || s.after_ms === null) return true;
  return s.after_ms / s.before_ms >= MIN_RATIO;
}
