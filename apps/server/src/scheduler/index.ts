import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import { runMaintenance } from '../maintenance/retention.ts';
import { inferMarkers } from '../deploys/infer.ts';

export interface Scheduler {
  stop: () => Promise<void>;
}

export interface SchedulerDeps {
  config: Config;
  pool: Pool;
  partitions: Partitions;
  log: FastifyBaseLogger;
}

/**
 * Periodic work runs as graphile-worker jobs in PostgreSQL: cron schedules a
 * job once per tick for the whole cluster, so N servers never run the same
 * pass twice, and a job that dies mid-way is retried.
 */
export async function startScheduler(deps: SchedulerDeps): Promise<Scheduler> {
  const { config, pool, partitions, log } = deps;
  const taskList: TaskList = {
    maintenance: async () => {
      const r = await runMaintenance(pool, partitions, config);
      if (r.dropped.length) log.info({ dropped: r.dropped }, 'retention dropped partitions');
    },
    infer_deploys: async () => {
      const r = await inferMarkers(pool);
      if (r.created || r.extended) log.info(r, 'inferred deploy markers');
    },
  };
  const runner: Runner = await run({
    pgPool: pool as never,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList,
    crontab: ['* * * * * maintenance ?max=1&jobKey=maintenance', '* * * * * infer_deploys ?max=1&jobKey=infer_deploys'].join('\n'),
    logger: new Logger(() => (level, message) => {
      if (level === 'error') log.error(message);
      else if (level === 'warning') log.warn(message);
      else log.debug(message);
    }),
  });
  return { stop: () => runner.stop() };
}
