import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import type { Registry } from '../otlp/registry.ts';
import type { FeatureJobs } from '../context.ts';
import { MINUTE_LATENESS_MS } from './detect-options.ts';
import { scheduledRun } from './pass.ts';
import type { ShardLeases } from './shards.ts';
import { floorMinute, MINUTE_MS } from './work.ts';

/**
 * Regression detection, on every server: each leases a share of the series'
 * shards (shards.ts) and runs a pass over them every minute, so N servers
 * share the work and each keeps its own shards' detectors warm. A run pairs
 * edges and infers markers first (or leaves that to the server doing it now,
 * pass.ts), so the pass sees this minute's edge series and attributes with
 * the markers they imply (the only place either runs periodically).
 *
 * Runs start MINUTE_LATENESS_MS past a minute boundary, when the minute
 * that just ended has its spans in (docs/detection.md "Time to open": a
 * minute is fed 20 s after its end), every `intervalMs` (ONSET_DETECT_INTERVAL,
 * default each minute; a longer interval counts from the server's start). A
 * run still going at the next start delays it instead of queueing another.
 * The job `detect_regressions` runs one now on the server that takes it.
 */
export function regressionTasks(deps: {
  pool: Pool;
  registry: Registry;
  partitions: Partitions;
  log: FastifyBaseLogger;
  leases: ShardLeases;
  /** Whole minutes between scheduled runs (default one). */
  intervalMs?: number;
}): FeatureJobs {
  const { leases, log } = deps;
  const intervalMs = deps.intervalMs ?? MINUTE_MS;
  leases.log ??= log;
  const run = async () => {
    // Renewed first: a run must not feed shards whose leases lapsed while this server was away.
    await leases.renew();
    const r = await scheduledRun({ ...deps, leases }, { log });
    if (!r) return;
    const d = r.detection;
    for (const h of d.held ?? [])
      log.info(
        h,
        `held a step on series ${h.series_id} at ${h.onset}: the hypervisor took ` +
          `${(h.steal_after_ms_per_s / 10).toFixed(1)} % of the CPU its hosts wanted from its onset ` +
          `(was ${(h.steal_before_ms_per_s / 10).toFixed(1)} %) and no deploy explains it`,
      );
    if (d.regressions.opened || d.regressions.resolved)
      log.info({ through: d.through, ...d.regressions, ms: d.duration_ms }, 'regressions');
    else
      log.debug(
        { through: d.through, ms: d.duration_ms, skipped: d.skipped ?? false, shards: d.shards },
        'detection pass',
      );
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  let lastStart: number | undefined;
  const next = (report: (err: unknown, what: string) => boolean) => {
    if (stopped) return;
    const now = Date.now();
    // The first run comes at the first start one interval less a minute after the server's (with the
    // default interval: the next one); later runs one interval after the last one started.
    const earliest = Math.max(
      now,
      lastStart === undefined ? now + intervalMs - MINUTE_MS : lastStart + intervalMs,
    );
    let at = floorMinute(earliest) + MINUTE_LATENESS_MS;
    if (at < earliest || at <= now) at += MINUTE_MS;
    const startAt = at;
    timer = setTimeout(() => {
      // The planned start, not the timer's (late by a few ms): the next interval counts from it.
      lastStart = startAt;
      running = run()
        .catch((err: Error) => {
          if (!report(err, 'detection run'))
            log.warn({ err: err.message }, 'detection run failed; next minute retries');
        })
        .finally(() => {
          running = null;
          next(report);
        });
    }, at - now);
  };

  return {
    tasks: {
      detect_regressions: () => run(),
    },
    crontab: [],
    perServer: [
      {
        start: async (report) => {
          stopped = false;
          await leases.start();
          next(report);
        },
        stop: async () => {
          stopped = true;
          clearTimeout(timer);
          await running;
          await leases.stop();
        },
      },
    ],
  };
}
