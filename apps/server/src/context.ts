import type { TaskList } from 'graphile-worker';
import type { Config } from './config.ts';
import type { Pool } from './db/pool.ts';
import type { Partitions } from './db/partitions.ts';
import type { Registry } from './otlp/registry.ts';
import type { IngestStats } from './otlp/stats.ts';
import type { IngestPipeline } from './otlp/pipeline.ts';
import type { ShardLeases } from './detection/shards.ts';

/**
 * Everything a feature plugin may need; each plugin takes what it uses. Its
 * own module so feature plugins and app.ts (which registers them) do not
 * import each other.
 */
export interface AppContext {
  config: Config;
  pool: Pool;
  registry: Registry;
  partitions: Partitions;
  stats: IngestStats;
  /** Shared by every listener's OTLP routes (one decode pool, one group committer); made per listener when absent. */
  ingest?: IngestPipeline;
  /** The detection shards this server leases; absent when its scheduler is off (it runs no scheduled pass). */
  detectLeases?: ShardLeases;
  /** Wake the scheduler (e.g. after ingest) without waiting for the next tick. */
  onIngested?: (kind: 'traces' | 'metrics', count: number) => void;
}

/**
 * What a feature hands the scheduler: its graphile-worker tasks, their cron
 * lines, and tasks to queue once when the runner starts (work that must not
 * wait for the first cron minute). The scheduler only composes these.
 */
export interface FeatureJobs {
  tasks: TaskList;
  crontab: string[];
  startup?: Array<{ task: string; jobKey: string }>;
  /**
   * Work every server runs for itself (not once per cluster), started and
   * stopped with the scheduler. `report` tells an outage of the database
   * (logged once by the scheduler; true) from another failure (false).
   */
  perServer?: Array<{
    start: (report: (err: unknown, what: string) => boolean) => Promise<void>;
    stop: () => Promise<void>;
  }>;
}
