import type { JobHelpers, TaskList } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import { runSloPass } from './evaluate.ts';
import { pruneCounters } from './store.ts';
import { runDeliveryPass } from '../webhooks/deliver.ts';
import { deliverySettings } from '../webhooks/settings.ts';
import { baseUrlOf } from '../webhooks/routes.ts';

/**
 * Scheduler wiring for SLOs and webhooks: `slo_evaluate` every minute (count,
 * evaluate, alert, then deliver what it queued); `webhook_deliver`, which
 * also re-queues itself for the earliest retry so backoff is not rounded up
 * to the next cron minute; `slo_prune` hourly (counters past their windows).
 */
export function sloTasks(deps: { config: Config; pool: Pool; log: FastifyBaseLogger }): {
  tasks: TaskList;
  crontab: string[];
} {
  const { config, pool, log } = deps;
  const settings = deliverySettings();
  const deliver = async (helpers: JobHelpers) => {
    const r = await runDeliveryPass(pool, { ...settings, baseUrl: baseUrlOf(config) });
    if (r.attempted || r.expired) log.info(r, 'webhook deliveries');
    if (r.next_due_at) {
      const runAt = new Date(Math.max(Date.parse(r.next_due_at), Date.now() + 1000));
      await helpers.addJob(
        'webhook_deliver',
        {},
        { runAt, jobKey: 'webhook_deliver_retry', jobKeyMode: 'replace', maxAttempts: 3 },
      );
    }
  };
  return {
    tasks: {
      slo_evaluate: async (_payload, helpers) => {
        const r = await runSloPass(pool);
        if (r.fired.length || r.resolved.length || r.released)
          log.info({ fired: r.fired, resolved: r.resolved, released: r.released }, 'SLO alerts');
        if (r.ms > 10_000) log.warn({ ms: r.ms, phases_ms: r.phases_ms }, 'slow SLO pass');
        await deliver(helpers);
      },
      webhook_deliver: async (_payload, helpers) => deliver(helpers),
      slo_prune: async () => {
        await pruneCounters(pool, Date.now(), true);
      },
    },
    crontab: [
      '* * * * * slo_evaluate ?max=1&jobKey=slo_evaluate',
      '* * * * * webhook_deliver ?max=1&jobKey=webhook_deliver',
      '17 * * * * slo_prune ?max=1&jobKey=slo_prune',
    ],
  };
}
