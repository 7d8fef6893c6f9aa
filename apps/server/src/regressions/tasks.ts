import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import type { Registry } from '../otlp/registry.ts';
import type { FeatureJobs } from '../scheduler/jobs.ts';
import { runDetect } from './pass.ts';

/**
 * Regression job: `detect_regressions` every minute, once per cluster
 * (graphile-worker's cron with a jobKey). It pairs edges and infers markers
 * first, so the pass sees this minute's edge series and attributes with the
 * markers they imply (the only place either runs periodically). A pass still running elsewhere (a long backfill, a
 * POST /api/v1/detect) makes this one a no-op instead of a queue.
 */
export function regressionTasks(deps: {
  pool: Pool;
  registry: Registry;
  partitions: Partitions;
  log: FastifyBaseLogger;
}): FeatureJobs {
  const { log } = deps;
  return {
    tasks: {
      detect_regressions: async () => {
        const r = await runDetect(deps, { wait: false, log });
        const d = r.detection;
        if (d.regressions.opened || d.regressions.resolved)
          log.info({ through: d.through, ...d.regressions, ms: d.duration_ms }, 'regressions');
        else
          log.debug(
            { through: d.through, ms: d.duration_ms, skipped: d.skipped ?? false },
            'detection pass',
          );
      },
    },
    crontab: ['* * * * * detect_regressions ?max=1&jobKey=detect_regressions'],
  };
}
