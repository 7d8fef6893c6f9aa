/**
 * What the detector keeps per quantile, with names for reading. The stored
 * form (state.ts) maps these to short keys only at the boundary.
 */
import { NEVER, NO_THRESHOLD, SPAN_NORM } from './tuning.ts';

export interface MetricState {
  /** Points seen while warming up (up to warmupPoints). */
  warmPoints: number;
  // Baseline (robust Holt): level and slope (log units per minute), the time of the last point fed, and that point's valid index.
  level: number;
  slope: number;
  levelT: number;
  fedThrough: number;
  // Noise model σ² = minuteVar + perEventVar / count (+ resolution²): decayed
  // sums for the regression of squared first differences on u = 1/count + 1/count'.
  noiseWeight: number;
  noiseSumU: number;
  noiseSumUU: number;
  noiseSumD2: number;
  noiseSumUD2: number;
  perEventVar: number;
  minuteVar: number;
  // Calibration of standardised residuals: their decayed running sum, the EWMA of its square, the scale implied.
  calibSum: number;
  calibSquare: number;
  calibScale: number;
  // Two-sided level CUSUMs (fast and slow pair) and the start of each run (valid-point index).
  fastUp: number;
  fastDown: number;
  fastUpStart: number;
  fastDownStart: number;
  slowUp: number;
  slowDown: number;
  slowUpStart: number;
  slowDownStart: number;
  // Tail-share CUSUMs: is the share of points above the regime's upper
  // quantile (tailThreshold) growing or shrinking? A tail that moved in only
  // some minutes (sparse p99) shows up here long before it moves the level.
  tailThreshold: number;
  tailThresholdAt: number;
  tailShare: number;
  /** Base rate the increments below were computed for: above/below-threshold steps of the up and down CUSUMs. */
  tailBaseRate: number;
  tailUpAbove: number;
  tailUpBelow: number;
  tailDownAbove: number;
  tailDownBelow: number;
  tailUp: number;
  tailDown: number;
  tailUpStart: number;
  tailDownStart: number;
  /** Pending alarm: direction (1 up, -1 down, 0 none). */
  alarm: number;
  /** Which CUSUM raised it: 0 fast level, 1 tail share, 2 slow level. */
  alarmSource: number;
  /** Tests run for the pending alarm (Bonferroni over retests). */
  alarmTests: number;
  /** Provisional onset and next test (valid-point indices). */
  alarmOnset: number;
  nextTest: number;
  /** First point of the current regime (valid index). */
  regimeStart: number;
  // New extremes over a long history (see extremes.ts): closed blocks of
  // EXTREMES_BLOCK_POINTS points (start, points, top two values), the open
  // block, the frozen threshold with its history size, and the exceedances since.
  blockStart: number[];
  blockPoints: number[];
  blockTop1: number[];
  blockTop2: number[];
  openStart: number;
  openPoints: number;
  openTop1: number;
  openTop2: number;
  extremeThreshold: number;
  extremeHistory: number;
  exceedances: number[];
  extremeRounds: number;
  // Slow wander (daily cycles), tracked for the p50: medians of the last 9
  // blocks of WANDER_BLOCK points, the last |lag-1| and |lag-8| differences
  // of them, and how many verdicts in a row found no wander beyond noise (the long scan needs one).
  wanderMedians: number[];
  wanderLag1: number[];
  wanderLag8: number[];
  calmVerdicts: number;
}

export function newMetricState(): MetricState {
  return {
    warmPoints: 0,
    level: 0,
    slope: 0,
    levelT: 0,
    fedThrough: 0,
    noiseWeight: 0,
    noiseSumU: 0,
    noiseSumUU: 0,
    noiseSumD2: 0,
    noiseSumUD2: 0,
    perEventVar: 0,
    minuteVar: 0,
    calibSum: 0,
    calibSquare: 1 / SPAN_NORM,
    calibScale: 1,
    fastUp: 0,
    fastDown: 0,
    fastUpStart: 0,
    fastDownStart: 0,
    slowUp: 0,
    slowDown: 0,
    slowUpStart: 0,
    slowDownStart: 0,
    tailThreshold: NO_THRESHOLD,
    tailThresholdAt: NEVER,
    tailShare: 0.1,
    tailBaseRate: 0,
    tailUpAbove: 0,
    tailUpBelow: 0,
    tailDownAbove: 0,
    tailDownBelow: 0,
    tailUp: 0,
    tailDown: 0,
    tailUpStart: 0,
    tailDownStart: 0,
    alarm: 0,
    alarmSource: 0,
    alarmTests: 0,
    alarmOnset: 0,
    nextTest: 0,
    regimeStart: 0,
    blockStart: [],
    blockPoints: [],
    blockTop1: [],
    blockTop2: [],
    openStart: 0,
    openPoints: 0,
    openTop1: -NO_THRESHOLD,
    openTop2: -NO_THRESHOLD,
    extremeThreshold: NO_THRESHOLD,
    extremeHistory: 0,
    exceedances: [],
    extremeRounds: 0,
    wanderMedians: [],
    wanderLag1: [],
    wanderLag8: [],
    calmVerdicts: 0,
  };
}
