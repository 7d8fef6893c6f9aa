import type { JobHelpers } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import { baseUrlOf, type Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { FeatureJobs } from '../context.ts';
import { runDeliveryPass } from './deliver.ts';
import { deliverySettings } from './settings.ts';
import { ALERTMANAGER_REFRESH_CRON, refreshAlertmanagerAlerts } from './alertmanager-refresh.ts';
import { syncAlertmanagerSilences } from './alertmanager-silences.ts';

/**
 * Webhook jobs: `webhook_deliver` every minute, and re-queued by itself for
 * the earliest retry so backoff is not rounded up to the next cron minute.
 * `deliver` is also what the SLO pass calls right after it queued alerts.
 */
export function webhookTasks(deps: {
  config: Config;
  pool: Pool;
  log: FastifyBaseLogger;
}): FeatureJobs & {
  deliver: (helpers: JobHelpers) => Promise<void>;
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
    deliver,
    tasks: {
      webhook_deliver: async (_payload, helpers) => deliver(helpers),
      alertmanager_refresh: async () => {
        const r = await refreshAlertmanagerAlerts(pool, {
          baseUrl: baseUrlOf(config),
          timeoutMs: settings.timeoutMs,
        });
        if (r.resent || r.failed) log.info(r, 'alertmanager alerts re-sent while firing');
        // Onset silences mirrored there (made, expired, or retried after a failure).
        const s = await syncAlertmanagerSilences(pool, { timeoutMs: settings.timeoutMs });
        if (s.created || s.expired || s.failed) log.info(s, 'alertmanager silences synced');
      },
    },
    crontab: [
      '* * * * * webhook_deliver ?max=1&jobKey=webhook_deliver',
      `${ALERTMANAGER_REFRESH_CRON} alertmanager_refresh ?max=1&jobKey=alertmanager_refresh`,
    ],
  };
}
