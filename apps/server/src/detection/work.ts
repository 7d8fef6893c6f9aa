/** What one detection pass produces, batch by batch, and reports. */
import type { HeldStep } from '@onset/contract';
import type { MinutePoint, StepChange } from '@onset/core';

export interface PassOptions {
  /** Feed minutes before this instant (floored to a minute). Default: now - lagMs. */
  uptoMs?: number;
  /** How long a minute is left open for late spans. Default 60 s. */
  lagMs?: number;
  /** Minutes of history a new series' detector starts from. Default 6 h. */
  coldWindowMs?: number;
  /** How far back a new series' history is screened (hourly). Default 7 d. */
  lookbackMs?: number;
  /** Series per read and per transaction. */
  batchSize?: number;
  /** Wall clock (tests). */
  now?: number;
}

export interface PassResult {
  skipped?: boolean;
  through: string;
  duration_ms: number;
  series: { total: number; new: number; fed: number; points: number };
  screened: number;
  /** The detection shards this pass fed, of the cluster's count (shards.ts). */
  shards?: { count: number; run: number };
  /**
   * `grouped`: steps that joined the regression of their incident instead of opening one;
   * `held`: steps not opened because their hosts lost CPU to the hypervisor at the onset (`held`);
   * `merged`: regressions merged into another (a step showed they are one incident).
   */
  regressions: {
    opened: number;
    resolved: number;
    updated: number;
    grouped: number;
    held: number;
    merged?: number;
  };
  held?: HeldStep[];
}

/** A step the detector confirmed on a series. */
export interface StepEvent {
  seriesId: number;
  change: StepChange;
}

/** One batch of series, fed: what the commit writes. */
export interface BatchWork {
  events: StepEvent[];
  /** Points fed in this pass, per series. */
  fed: Map<number, MinutePoint[]>;
  /** Series whose state is written (with `through` = the horizon). */
  checkpoint: number[];
  /** Series without new minutes whose stored state is current: only `through` moves to the horizon. */
  advance: number[];
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const floorMinute = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;
