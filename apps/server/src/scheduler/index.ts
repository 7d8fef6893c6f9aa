import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import { observeJobs } from '../observability/jobs.ts';
import { grafanaAnnotationTasks } from '../observability/grafana-annotations.ts';
import type { Registry } from '../otlp/registry.ts';
import { maintenanceTasks } from '../maintenance/tasks.ts';
import { sloTasks } from '../slos/tasks.ts';
import { regressionTasks } from '../detection/tasks.ts';
import { ShardLeases } from '../detection/shards.ts';
import { webhookTasks } from '../webhooks/tasks.ts';
import { verdictTasks } from '../verdicts/tasks.ts';
import type { FeatureJobs } from '../context.ts';
import { DatabaseAvailability } from '../db/availability.ts';

/** How the job runner's own log lines read when the trouble is the database being away. */
const DATABASE_AWAY =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|terminating connection|Connection terminated|connection error|not queryable|starting up|shutting down|in recovery|too many clients|timeout exceeded when trying to connect/i;

export interface Scheduler {
  stop: () => Promise<void>;
}

export interface SchedulerDeps {
  config: Config;
  pool: Pool;
  partitions: Partitions;
  log: FastifyBaseLogger;
  /**
   * The server's series registry (AppContext's, with the cardinality guard): edge pairing in the
   * detection pass registers series through it, under the same limits as ingest.
   */
  registry: Registry;
  /** This server's detection shards (made here when absent). */
  detectLeases?: ShardLeases;
}

/** A runner that stopped for another reason than an outage is restarted after 5 s, 10 s, ... up to 60 s. */
const RESTART_MIN_MS = 5000;
const RESTART_MAX_MS = 60_000;

/** Every-minute cron lines, as jobs to queue at once when the database is back (`* * * * * task ?…jobKey=k`). */
function everyMinuteJobs(crontab: string): Array<{ task: string; jobKey: string }> {
  const jobs: Array<{ task: string; jobKey: string }> = [];
  for (const line of crontab.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6 || f.slice(0, 5).join(' ') !== '* * * * *') continue;
    const key = /[?&]jobKey=([^&\s]+)/.exec(f[6] ?? '')?.[1];
    jobs.push({ task: f[5]!, jobKey: key ?? f[5]! });
  }
  return jobs;
}

/**
 * Periodic work runs as graphile-worker jobs in PostgreSQL: cron schedules a
 * job once per tick for the whole cluster, so N servers never run the same
 * pass twice, and a job that dies mid-way is retried.
 *
 * PostgreSQL going away (for a second or for an hour) never ends the process:
 * the runner's and the jobs' failures go to one DatabaseAvailability, which
 * logs the outage once and probes with backoff; when the database answers
 * again the runner is started afresh (cron may itself be backing off for a
 * minute or more) and every per-minute pass is queued at once, so detection,
 * SLO evaluation, pairing and delivery resume without waiting for cron.
 */
/** Every periodic job of every feature, composed here and nowhere else. */
export function backgroundFeatures(deps: SchedulerDeps): FeatureJobs[] {
  const { config, pool, partitions, log, registry } = deps;
  const leases =
    deps.detectLeases ??
    new ShardLeases(pool, { shards: config.detectShards, ttlMs: config.detectLeaseTtlMs });
  const webhooks = webhookTasks({ config, pool, log });
  return [
    maintenanceTasks({ config, pool, partitions, log }),
    sloTasks({ pool, log, afterPass: webhooks.deliver }),
    webhooks,
    regressionTasks({
      pool,
      registry,
      partitions,
      log,
      leases,
      intervalMs: config.detectIntervalMs,
    }),
    grafanaAnnotationTasks({ config, pool, log }),
    verdictTasks({ config, pool, log, afterPass: webhooks.deliver }),
  ];
}

export async function startScheduler(deps: SchedulerDeps): Promise<Scheduler> {
  const { config, pool, log } = deps;
  const features = backgroundFeatures(deps);
  const taskList: TaskList = {};
  for (const f of features)
    for (const [name, task] of Object.entries(f.tasks)) {
      if (taskList[name]) throw new Error(`scheduler: two features export the job "${name}"`);
      taskList[name] = task;
    }
  const crontab = features.flatMap((f) => f.crontab).join('\n');
  const startup = features.flatMap((f) => f.startup ?? []);
  const resume = everyMinuteJobs(crontab);
  const availability = new DatabaseAvailability(pool, log, config.dbRetryMaxMs);
  const logger = new Logger(() => (level, message, meta) => {
    // The database away (stopping, restarting, refusing connections) is not a job failure:
    // availability logs it once per outage; the runner's retries of it go to debug.
    if (level === 'error' || level === 'warning') {
      const err = (meta as { error?: unknown } | undefined)?.error;
      const away =
        DATABASE_AWAY.test(message) ||
        (err !== undefined && DATABASE_AWAY.test(String((err as Error)?.message ?? err)));
      if (away && availability.report(err ?? { code: 'ECONNREFUSED', message }, 'job runner'))
        return log.debug(`scheduler: ${message}`);
    }
    if (level === 'error') log.error(message);
    else if (level === 'warning') log.warn(message);
    else log.debug(message);
  });

  let runner: Runner | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let restarts = 0;
  const retryLater = (err: unknown, what: string) => {
    runner = null;
    if (stopped) return;
    // An outage: the recovery listener below restarts the runner. Anything else: backoff.
    if (availability.report(err, 'job runner')) return;
    const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** restarts++);
    log.warn({ err: (err as Error)?.message, retry_ms: delay }, what);
    timer = setTimeout(() => void launch(), delay);
  };

  const launch = async (): Promise<void> => {
    try {
      runner = await run({
        pgPool: pool as never,
        concurrency: 2,
        noHandleSignals: true,
        pollInterval: 1000,
        taskList,
        crontab,
        logger,
      });
      const started = runner;
      observeJobs(started.events);
      runner.promise.catch((err: Error) => {
        if (runner === started) retryLater(err, 'scheduler stopped; restarting');
      });
      restarts = 0;
      await queue(started, startup);
    } catch (err) {
      retryLater(err, 'scheduler could not start; retrying');
    }
  };
  /** Queue jobs now (work that must not wait for the next cron minute); if this fails, cron starts them later. */
  const queue = async (r: Runner, jobs: Array<{ task: string; jobKey: string }>) => {
    for (const j of jobs)
      await r
        .addJob(j.task, {}, { jobKey: j.jobKey, jobKeyMode: 'replace', maxAttempts: 1 })
        .catch((err: Error) => {
          if (!availability.report(err, 'job runner'))
            log.warn({ err: err.message, task: j.task }, 'scheduler: job not queued');
        });
  };
  let restarting: Promise<void> | null = null;
  availability.onRecovered(() => {
    if (stopped || restarting) return;
    clearTimeout(timer);
    const old = runner;
    runner = null;
    restarting = (async () => {
      await old?.stop().catch(() => {});
      if (stopped) return;
      await launch();
      if (runner) await queue(runner, resume);
    })().finally(() => {
      restarting = null;
    });
  });
  await launch();
  const perServer = features.flatMap((f) => f.perServer ?? []);
  for (const p of perServer) await p.start((err, what) => availability.report(err, what));
  return {
    stop: async () => {
      stopped = true;
      for (const p of perServer) await p.stop().catch(() => {});
      availability.stop();
      clearTimeout(timer);
      await restarting;
      await runner?.stop().catch(() => {});
    },
  };
}
