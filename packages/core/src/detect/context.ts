/** What every part of the detector reads and updates: options, the point ring, the two quantiles' state, recent reports. */
import type { MetricState } from './metric-state.ts';
import type { PointRing } from './ring.ts';
import type { ResolvedDetectOptions } from './types.ts';

/** A change reported lately (either quantile), to drop the other quantile's report of the same step. */
export interface RecentChange {
  onset: number;
  direction: number;
  uncertainty: number;
}

/** An episode of drift (drift.ts): its direction (0: none), first point (valid index) and when it was last seen rising. */
export interface DriftEpisode {
  dir: number;
  start: number;
  seen: number;
}

export interface DetectorContext {
  readonly opts: ResolvedDetectOptions;
  readonly ring: PointRing;
  /** p50 (0) and p99 (1). */
  readonly metrics: [MetricState, MetricState];
  recent: RecentChange[];
  /** The drift episode reported last (drift.ts; dir 0: none). */
  drift: DriftEpisode;
  /** log(minRatio): the smallest step worth reporting, in log units. */
  readonly logMinRatio: number;
  /** resolution²: the input's quantisation noise variance. */
  readonly resolutionVar: number;
}
