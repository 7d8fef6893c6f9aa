/**
 * Bursts: a step confirmed while it was still going on (4 points of a
 * ×5–1000 stall are enough) that is over within a few minutes. The detector
 * has reported it (changes are never retracted), so the verdict is taken
 * on the points after the onset, pass by pass: once its last BURST_BACK_POINTS
 * points are all back at the before level, it was a burst — a transient, not
 * a regression to page (the server closes it, labelled `transient`). A step
 * that has lasted more than BURST_MAX_POINTS is not a burst whatever follows
 * (it is a regression that recovered).
 */
import type { MinutePoint, StepChange } from './types.ts';

/** Longest step (points at the after level) still called a burst. */
export const BURST_MAX_POINTS = 15;
/** Points in a row back at the before level that end a burst. */
export const BURST_BACK_POINTS = 3;
/** Share of the step (log terms) each of those points must have undone (as stepRecovery's default). */
export const BURST_BACK_FRACTION = 0.75;

export interface BurstVerdict {
  /** The step is over: the last BURST_BACK_POINTS points are back and it lasted ≤ BURST_MAX_POINTS. */
  over: boolean;
  /** Points at the after level before the return (the burst's length in points), when over. */
  points: number;
}

/**
 * Was the step of `change` a burst, judging by `since` (the points from its
 * onset on, oldest first)? Reads the change's own quantile; `floor` as the
 * detection used.
 */
export function burstVerdict(
  change: StepChange,
  since: readonly MinutePoint[],
  floor = 0,
): BurstVerdict {
  const no: BurstVerdict = { over: false, points: 0 };
  // A floor is confirmed on 32 points or more: never a burst.
  if (change.shape === 'floor') return no;
  const key = change.metric;
  const ys: number[] = [];
  for (const p of since) {
    const v = p[key];
    if (p.count > 0 && Number.isFinite(v)) ys.push(Math.log(Math.max(v, 0) + floor));
  }
  if (ys.length < BURST_BACK_POINTS + 1) return no;
  const lb = Math.log(change.before[key] + floor);
  const la = Math.log(change.after[key] + floor);
  const step = la - lb;
  if (!(Math.abs(step) > 0)) return no;
  const recovered = (y: number) => (la - y) / step;
  // The run of points back at the before level at the end…
  let back = 0;
  for (let i = ys.length - 1; i >= 0 && recovered(ys[i]!) >= BURST_BACK_FRACTION; i--) back++;
  if (back < BURST_BACK_POINTS) return no;
  // …and before it, the burst: at most BURST_MAX_POINTS, mostly at the after level.
  const burst = ys.slice(0, ys.length - back);
  if (burst.length === 0 || burst.length > BURST_MAX_POINTS) return no;
  const up = burst.filter((y) => recovered(y) < 0.5).length;
  if (up < Math.ceil(burst.length / 2)) return no;
  return { over: true, points: burst.length };
}
