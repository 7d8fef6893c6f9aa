import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import type { FeatureJobs } from '../context.ts';
import { runMaintenance } from './retention.ts';

/** Housekeeping job: `maintenance` every minute (partitions, retention, compaction). */
export function maintenanceTasks(deps: {
  config: Config;
  pool: Pool;
  partitions: Partitions;
  log: FastifyBaseLogger;
}): FeatureJobs {
  const { config, pool, partitions, log } = deps;
  return {
    tasks: {
      maintenance: async () => {
        const r = await runMaintenance(pool, partitions, config);
        if (r.dropped.length) log.info({ dropped: r.dropped }, 'retention dropped partitions');
      },
    },
    crontab: ['* * * * * maintenance ?max=1&jobKey=maintenance'],
  };
}
