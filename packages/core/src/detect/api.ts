import { StepDetector, type DetectorStateJSON } from './detector.ts';
import { median } from './stats.ts';
import { floorRecovery } from './tail-collapse.ts';
import type { DetectOptions, MinutePoint, StepChange } from './types.ts';

/**
 * Step changes in one series of per-minute quantiles, oldest point first.
 * `index` in the result refers to positions in `points`. Equivalent to
 * feeding the same points through `detectStepsIncremental` in any chunks.
 */
export function detectSteps(points: readonly MinutePoint[], opts?: DetectOptions): StepChange[] {
  return new StepDetector(opts).pushAll(points);
}

/**
 * Incremental form for a scheduler: pass the state returned by the previous
 * call (or undefined the first time) and only the points after the ones
 * already seen. Indices continue across calls (the n-th point ever passed
 * has index n). Options are fixed by the first call and kept in the state.
 */
export function detectStepsIncremental(
  state: DetectorStateJSON | undefined,
  newPoints: readonly MinutePoint[],
  opts?: DetectOptions,
): { state: DetectorStateJSON; changes: StepChange[] } {
  const d = state ? StepDetector.fromJSON(state) : new StepDetector(opts);
  const changes = d.pushAll(newPoints);
  return { state: d.toJSON(), changes };
}

export interface RecoveryOptions {
  /** Same floor as the detection used. */
  floor?: number;
  /** Recent points needed for a verdict. Default 15. */
  minPoints?: number;
  /** Fraction of the step (in log terms) that must be undone. Default 0.75. */
  fraction?: number;
}

export interface Recovery {
  /** Latency is back at (or beyond) the before level. */
  resolved: boolean;
  /** Median of the recent points for the change's metric, in the input unit. */
  level: number;
  /** Share of the step undone, in log terms: 0 = still at the after level, 1 = back before. */
  recovered: number;
  points: number;
}

/**
 * Has latency returned to the level before `change`? Looks at `recent`
 * (points after the change, e.g. the last 30 minutes) for the change's
 * metric: resolved when at least `fraction` of the step (in log terms) is
 * undone by the median and at least 70% of the recent points sit on the
 * before side of the midpoint, so a few quiet minutes do not close a regression.
 */
export function stepRecovery(
  change: StepChange,
  recent: readonly MinutePoint[],
  opts: RecoveryOptions = {},
): Recovery {
  const floor = opts.floor ?? 0;
  const minPoints = opts.minPoints ?? 15;
  // A floor (a p99 collapsed onto a band) is over when the band is no longer where the p99 sits.
  if (change.shape === 'floor' && change.band) return floorRecovery(change.band, recent, minPoints);
  const fraction = opts.fraction ?? 0.75;
  const key = change.metric;
  const ys: number[] = [];
  for (const p of recent) {
    const v = p[key];
    if (p.count > 0 && Number.isFinite(v)) ys.push(Math.log(Math.max(v, 0) + floor));
  }
  const lb = Math.log(change.before[key] + floor);
  const la = Math.log(change.after[key] + floor);
  if (ys.length === 0) return { resolved: false, level: NaN, recovered: 0, points: 0 };
  const m = median(ys);
  const step = la - lb;
  const recovered = step === 0 ? 1 : (la - m) / step;
  let resolved = false;
  if (ys.length >= minPoints && recovered >= fraction) {
    // Most recent points must sit on the before side of the midpoint, not just their median.
    const mid = (la + lb) / 2;
    const dir = Math.sign(step);
    const onBeforeSide = ys.filter((y) => dir * (y - mid) < 0).length;
    resolved = onBeforeSide / ys.length >= 0.7;
  }
  return { resolved, level: Math.max(0, Math.exp(m) - floor), recovered, points: ys.length };
}
