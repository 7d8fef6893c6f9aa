import type { JobHelpers } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { FeatureJobs } from '../scheduler/jobs.ts';
import { runSloPass } from './evaluate.ts';
import { pruneCounters } from './store.ts';

/**
 * SLO jobs: `slo_evaluate` every minute (count, evaluate, alert, then
 * `afterPass`, which the scheduler wires to webhook delivery so what the pass
 * queued goes out at once); `slo_prune` hourly (counters past their windows).
 */
export function sloTasks(deps: {
  pool: Pool;
  log: FastifyBaseLogger;
  afterPass?: (helpers: JobHelpers) => Promise<void>;
}): FeatureJobs {
  const { pool, log, afterPass } = deps;
  return {
    tasks: {
      slo_evaluate: async (_payload, helpers) => {
        const r = await runSloPass(pool);
        if (r.fired.length || r.resolved.length || r.released)
          log.info({ fired: r.fired, resolved: r.resolved, released: r.released }, 'SLO alerts');
        if (r.ms > 10_000) log.warn({ ms: r.ms, phases_ms: r.phases_ms }, 'slow SLO pass');
        await afterPass?.(helpers);
      },
      slo_prune: async () => {
        await pruneCounters(pool, Date.now(), true);
      },
    },
    crontab: [
      '* * * * * slo_evaluate ?max=1&jobKey=slo_evaluate',
      '17 * * * * slo_prune ?max=1&jobKey=slo_prune',
    ],
  };
}
