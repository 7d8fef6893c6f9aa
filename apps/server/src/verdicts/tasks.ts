import type { FastifyBaseLogger } from 'fastify';
import type { JobHelpers } from 'graphile-worker';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import { getMarker, listMarkers } from '../deploys/queries.ts';
import type { FeatureJobs } from '../context.ts';
import { raiseVerdictAlert, resolveStaleVerdictAlerts } from './alerting.ts';
import { computeVerdict, verdictSettings } from './engine.ts';

/** Markers this recent are judged by the job (the longest window, 2h, and an hour to spare). */
const RECENT_MS = 3 * 3_600_000;

/**
 * One pass of verdict alerting: every recent posted marker's verdict under the server's
 * settings (no request overrides), an alert for each that fails (once per marker),
 * and firing ones resolved whose verdict no longer fails. A request for a verdict
 * raises its alert too (routes.ts); this pass covers the markers nobody asks about.
 */
export async function runVerdictAlertPass(
  pool: Pool,
  config: Pick<Config, 'verdictServices'>,
  now = Date.now(),
): Promise<{ judged: number; raised: number; resolved: number }> {
  const settingsOf = (service: string | null) =>
    verdictSettings(config.verdictServices, service, {});
  // Posted markers only: an inferred one repeats a posted rollout's change (one alert per
  // version and dependency it saw), and regressions already alert on what telemetry shows.
  const markers = await listMarkers(pool, {
    fromMs: now - RECENT_MS,
    toMs: now,
    source: 'api',
    limit: 5000,
  });
  let raised = 0;
  for (const m of markers) {
    const v = await computeVerdict(pool, m.id, settingsOf, now);
    if (v && (await raiseVerdictAlert(pool, m, v.verdict, now))) raised++;
  }
  const resolved = await resolveStaleVerdictAlerts(
    pool,
    async (id) =>
      (await getMarker(pool, id))
        ? ((await computeVerdict(pool, id, settingsOf, now))?.verdict ?? null)
        : null,
    now,
  );
  return { judged: markers.length, raised, resolved };
}

/** `verdict_alerts` every minute. */
export function verdictTasks(deps: {
  config: Config;
  pool: Pool;
  log: FastifyBaseLogger;
  /** Webhook delivery, run right after alerts were raised or resolved. */
  afterPass: (helpers: JobHelpers) => Promise<void>;
}): FeatureJobs {
  const { config, pool, log, afterPass } = deps;
  return {
    tasks: {
      verdict_alerts: async (_payload, helpers) => {
        const r = await runVerdictAlertPass(pool, config);
        if (r.raised || r.resolved) {
          log.info(r, 'deploy verdict alerts');
          await afterPass(helpers);
        }
      },
    },
    crontab: ['* * * * * verdict_alerts ?max=1&jobKey=verdict_alerts'],
  };
}
