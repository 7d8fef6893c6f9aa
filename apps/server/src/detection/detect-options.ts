/** How the server runs the core detector on its series. */
import type { DetectOptions } from '@onset/core';

// The per-view options (floor, MIN_RATIO) are core's detectOptionsFor: the regressions
// lifecycle reads them too, and it does not import the pass.

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

/**
 * When a minute is fed to the detectors. Agents flush every second (the
 * OTel SDKs' batch processors every 5 s, bpftrace probes every 10 s), so a
 * minute's spans are in well within MINUTE_LATENESS_MS of its end; the pass
 * runs that long after each minute boundary and feeds every minute that
 * ended at least that long ago. (Before: the pass ran at :00 and fed the
 * minutes that ended a full minute earlier, 60 s after each minute's end.)
 * Spans later than this still reach the charts, not the detector.
 */
export const MINUTE_LATENESS_MS = 20_000;

/** Milliseconds from a minute's end until a pass that runs `offsetMs` past each minute boundary and waits `latenessMs` has fed it. */
export function sealDelayMs(offsetMs: number, latenessMs: number): number {
  return Math.ceil((latenessMs - offsetMs) / 60_000) * 60_000 + offsetMs;
}
