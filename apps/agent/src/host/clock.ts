/**
 * Kernel event times (bpftrace `nsecs`) are CLOCK_MONOTONIC; spans need wall
 * time. process.hrtime is CLOCK_MONOTONIC too, so the offset between the two
 * clocks converts one into the other. It is re-measured every minute to follow
 * NTP adjustments of the wall clock.
 */
import { performance } from 'node:perf_hooks';

const REMEASURE_MS = 60_000;

let offsetNs = 0n;
let measuredAt = -Infinity;

function measure(): void {
  const mono = process.hrtime.bigint();
  // timeOrigin + now() is wall time with microsecond precision (Date.now() has only ms).
  const wallNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
  offsetNs = wallNs - mono;
  measuredAt = performance.now();
}

export function monotonicToEpochNs(monoNs: bigint): bigint {
  // performance.now(), a number: this runs per traced event, and a BigInt clock read allocates.
  if (performance.now() - measuredAt > REMEASURE_MS) measure();
  return monoNs + offsetNs;
}
