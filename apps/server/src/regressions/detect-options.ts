/** How the server runs the core detector on its series. */
import type { DetectOptions } from '@onset/core';

/** Smallest step (after / before) reported as a regression. */
export const MIN_RATIO = 1.2;
/** Gap views (client minus server) sit near zero: compare them above a 1 ms floor (µs). */
const GAP_FLOOR_US = 1000;

/**
 * Hourly screening of old history: shorter windows than the minute detector,
 * and a looser test (a step three hours before the minute window must still
 * pass): a candidate only costs a read of minutes, which decide.
 */
export const SCREEN_OPTIONS: DetectOptions = {
  beforePoints: 48,
  maxAfterPoints: 12,
  warmupPoints: 6,
  alpha: 1e-3,
};

export function detectOptionsFor(view: string): DetectOptions {
  return { floor: view === 'gap' ? GAP_FLOOR_US : 0, minRatio: MIN_RATIO };
}
