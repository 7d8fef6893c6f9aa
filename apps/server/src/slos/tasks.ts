import type { JobHelpers } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { FeatureJobs } from '../context.ts';
import { runSloPass, sloProgressOf } from './evaluate.ts';
import { pruneCounters } from './store.ts';
import { sloEvaluationSeconds } from '../observability/metrics.ts';

/** A long pass (thousands of SLOs) says how far it is this often. */
const PROGRESS_LOG_MS = 10_000;

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
        const t0 = performance.now();
        const ticker = setInterval(() => {
          const p = sloProgressOf(pool);
          if (p) log.info(p, `SLO pass: ${p.slos_done}/${p.slos_total} SLOs evaluated`);
        }, PROGRESS_LOG_MS);
        const r = await runSloPass(pool)
          .catch((err: unknown) => {
            sloEvaluationSeconds.observe({ result: 'error' }, (performance.now() - t0) / 1000);
            throw err;
          })
          .finally(() => clearInterval(ticker));
        sloEvaluationSeconds.observe({ result: 'ok' }, (performance.now() - t0) / 1000);
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
