import type { FastifyBaseLogger } from 'fastify';
import type { JobHelpers } from 'graphile-worker';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import type { Registry } from '../otlp/registry.ts';
import type { FeatureJobs } from '../scheduler/jobs.ts';
import { MINUTE_LATENESS_MS } from './detect-options.ts';
import { tryRunDetect } from './pass.ts';
import { floorMinute } from './work.ts';

/**
 * Regression job: `detect_regressions` every minute, once per cluster
 * (graphile-worker's cron with a jobKey). It pairs edges and infers markers
 * first, so the pass sees this minute's edge series and attributes with the
 * markers they imply (the only place either runs periodically). A pass still running elsewhere (a long backfill, a
 * POST /api/v1/detect) makes this one a no-op instead of a queue.
 *
 * Cron fires at each minute boundary, when the minute that just ended may
 * still have spans in flight: the job then re-queues itself for
 * MINUTE_LATENESS_MS past the boundary, and that run feeds every minute that
 * ended at least that long ago (docs/detection.md "Time to open": a minute
 * is fed 20 s after its end instead of 60 s).
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
      detect_regressions: async (payload: unknown, helpers: JobHelpers) => {
        const now = Date.now();
        const sealedAt = floorMinute(now) + MINUTE_LATENESS_MS;
        // (The deferred run goes ahead even if this clock is a little behind the database's.)
        const deferred = (payload as { deferred?: unknown } | null)?.deferred === true;
        if (now < sealedAt && !deferred) {
          await helpers.addJob(
            'detect_regressions',
            { deferred: true },
            {
              runAt: new Date(sealedAt),
              jobKey: 'detect_regressions_sealed',
              jobKeyMode: 'replace',
              maxAttempts: 1,
            },
          );
          return;
        }
        const r = await tryRunDetect(deps, {
          log,
          uptoMs: now < sealedAt ? floorMinute(now) : now - MINUTE_LATENESS_MS,
        });
        if (!r) {
          log.debug('detection run skipped: another server is running one');
          return;
        }
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
