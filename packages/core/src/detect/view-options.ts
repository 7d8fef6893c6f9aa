/** The detector's options per view, as the server runs it on its series (and the benchmarks replay it). */
import type { DetectOptions } from './types.ts';

/** Smallest step (after / before) reported as a regression. */
export const MIN_RATIO = 1.2;
/** Gap views (client minus server) sit near zero: compare them above a 1 ms floor (µs). */
const GAP_FLOOR_US = 1000;

export function detectOptionsFor(view: string): DetectOptions {
  return { floor: view === 'gap' ? GAP_FLOOR_US : 0, minRatio: MIN_RATIO };
}
