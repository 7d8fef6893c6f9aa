import type { RegressionShape } from '@onset/contract';

/** One minute of one series, as the server reads it from per-minute histograms. */
export interface MinutePoint {
  /** Start of the minute, epoch milliseconds. */
  t: number;
  /** Events in the minute; 0 (or a missing entry) means no data. */
  count: number;
  /** Quantiles in any positive latency unit (the same unit for the whole series). */
  p50: number;
  p99: number;
}

export type StepMetric = 'p50' | 'p99';
export type StepDirection = 'regression' | 'improvement';

/** A level on one side of a step, in the unit of the input. */
export interface LevelSummary {
  /** Median over the window of the per-minute p50 / p99. */
  p50: number;
  p99: number;
  /** Events in the window. */
  count: number;
  /** Minutes (points with data) in the window. */
  points: number;
}

export interface StepChange {
  /** First point at the new level: index into the points passed (or points ever pushed, incrementally). */
  index: number;
  /** `t` of that point. */
  t: number;
  /** The quantile that moved most (relative); `metrics` lists every quantile that moved. */
  metric: StepMetric;
  metrics: StepMetric[];
  direction: StepDirection;
  before: LevelSummary;
  after: LevelSummary;
  /** after / before of `metric` (see docs/detection.md for values near zero). */
  ratio: number;
  ratios: { p50: number; p99: number };
  /** 1 - p-value of the confirming rank test. */
  confidence: number;
  /** Half-width, in points, of the plausible onset interval around `index`. */
  onsetUncertaintyPoints: number;
  /** The point at which the change was confirmed (detection delay = detectedIndex - index + 1 points). */
  detectedIndex: number;
  detectedT: number;
  /**
   * What kind of change (absent: 'step'). 'transient': the level was already
   * back when the step was confirmed (a burst of a few minutes): not a
   * regression to open. 'drift': a sustained ramp, reported once with its
   * rate (`driftPerHour`) instead of as a series of steps. 'floor': the
   * p99 left a noisy range for a steady, higher band (a fixed wait such as
   * a delayed ACK on a share of calls), with `band`.
   */
  shape?: RegressionShape;
  /**
   * For a floor: where most minutes' p99 sat, in the input unit — the
   * narrowest range holding half of the minutes after the onset, and the
   * narrowest holding half of those before it (tail-collapse.ts).
   */
  band?: { before: [number, number]; after: [number, number] };
  /** For a drift: growth factor per hour (e.g. 1.2 = +20 % an hour; < 1 for a falling ramp). */
  driftPerHour?: number;
}

export interface DetectOptions {
  /**
   * Added to every value before taking logs. 0 for latency views; for the
   * gap view (client minus server, often ~0) use about 1 ms in the series'
   * unit so that noise near zero is not magnified. Negative values count as 0.
   */
  floor?: number;
  /** Smallest relative step worth reporting (after / before, ≥ 1). Default 1.1. */
  minRatio?: number;
  /** Significance of the confirming rank test. Default 1e-5. */
  alpha?: number;
  /** CUSUM reference value and threshold, in robust standard deviations. */
  cusumK?: number;
  cusumH?: number;
  /** Robust clip for standardised residuals. */
  clip?: number;
  /** History (points) the confirming test compares against. */
  beforePoints?: number;
  /** Longest confirmation wait (points) before an alarm is written off as drift. */
  maxAfterPoints?: number;
  /** Points needed to start (first level and noise estimate). */
  warmupPoints?: number;
  /** Resolution of the input in log units (histogram buckets are ~2% wide). */
  resolution?: number;
}

export type ResolvedDetectOptions = Required<DetectOptions>;

export const DEFAULT_DETECT_OPTIONS: ResolvedDetectOptions = {
  floor: 0,
  minRatio: 1.1,
  alpha: 1e-5,
  cusumK: 0.5,
  cusumH: 8,
  clip: 3,
  beforePoints: 120,
  maxAfterPoints: 120,
  warmupPoints: 8,
  resolution: 0.01,
};

export function resolveDetectOptions(opts: DetectOptions = {}): ResolvedDetectOptions {
  const o = { ...DEFAULT_DETECT_OPTIONS };
  for (const k of Object.keys(o) as (keyof ResolvedDetectOptions)[]) {
    const v = opts[k];
    if (v !== undefined) {
      if (typeof v !== 'number' || !Number.isFinite(v))
        throw new RangeError(`detect option ${k} must be a finite number`);
      o[k] = v;
    }
  }
  if (o.floor < 0) throw new RangeError('detect option floor must be ≥ 0');
  if (o.minRatio < 1) throw new RangeError('detect option minRatio must be ≥ 1');
  if (!(o.alpha > 0 && o.alpha < 1)) throw new RangeError('detect option alpha must be in (0, 1)');
  if (o.beforePoints < 8 || o.maxAfterPoints < 4 || o.warmupPoints < 3)
    throw new RangeError('detect windows too small');
  o.beforePoints = Math.round(o.beforePoints);
  o.maxAfterPoints = Math.round(o.maxAfterPoints);
  o.warmupPoints = Math.round(o.warmupPoints);
  return o;
}
