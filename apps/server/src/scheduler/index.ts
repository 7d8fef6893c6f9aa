import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import { observeJobs } from '../observability/jobs.ts';
import { grafanaAnnotationTasks } from '../observability/grafana-annotations.ts';
import { Registry } from '../otlp/registry.ts';
import { maintenanceTasks } from '../maintenance/tasks.ts';
import { sloTasks } from '../slos/tasks.ts';
import { regressionTasks } from '../regressions/tasks.ts';
import { webhookTasks } from '../webhooks/tasks.ts';
import type { FeatureJobs } from './jobs.ts';

const DATABASE_GOING_AWAY =
  /terminating connection due to administrator command|Client has encountered a connection error|Connection terminated/i;

export interface Scheduler {
  stop: () => Promise<void>;
}

export interface SchedulerDeps {
  config: Config;
  pool: Pool;
  partitions: Partitions;
  log: FastifyBaseLogger;
}

const RESTART_DELAY_MS = 5000;

/**
 * Periodic work runs as graphile-worker jobs in PostgreSQL: cron schedules a
 * job once per tick for the whole cluster, so N servers never run the same
 * pass twice, and a job that dies mid-way is retried. If the database goes
 * away the runner stops; we start it again once it is back instead of
 * letting the process die.
 */
export async function startScheduler(deps: SchedulerDeps): Promise<Scheduler> {
  const { config, pool, partitions, log } = deps;
  const registry = new Registry(pool);
  const webhooks = webhookTasks({ config, pool, log });
  // Every periodic job of every feature, composed here and nowhere else.
  const features: FeatureJobs[] = [
    maintenanceTasks({ config, pool, partitions, log }),
    sloTasks({ pool, log, afterPass: webhooks.deliver }),
    webhooks,
    regressionTasks({ pool, registry, partitions, log }),
    grafanaAnnotationTasks({ config, pool, log }),
  ];
  const taskList: TaskList = {};
  for (const f of features)
    for (const [name, task] of Object.entries(f.tasks)) {
      if (taskList[name]) throw new Error(`scheduler: two features export the job "${name}"`);
      taskList[name] = task;
    }
  const crontab = features.flatMap((f) => f.crontab).join('\n');
  const startup = features.flatMap((f) => f.startup ?? []);
  const logger = new Logger(() => (level, message) => {
    // PostgreSQL stopping (Ctrl-C reaches the embedded one too) or restarting is not a job
    // failure: the runner reconnects or is being stopped, so these are warnings, not errors.
    if (level === 'error' && DATABASE_GOING_AWAY.test(message)) log.warn(`scheduler: ${message}`);
    else if (level === 'error') log.error(message);
    else if (level === 'warning') log.warn(message);
    else log.debug(message);
  });

  let runner: Runner | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

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
        log.warn({ err: err.message }, 'scheduler stopped; restarting when the database answers');
        runner = null;
        if (!stopped) timer = setTimeout(() => void launch(), RESTART_DELAY_MS);
      });
      // Work that must not wait for the first cron minute; if this fails, cron starts it later.
      for (const j of startup)
        await started
          .addJob(j.task, {}, { jobKey: j.jobKey, jobKeyMode: 'replace', maxAttempts: 1 })
          .catch((err: Error) => log.warn({ err: err.message, task: j.task }, 'scheduler: startup job not queued'));
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'scheduler could not start; retrying');
      if (!stopped) timer = setTimeout(() => void launch(), RESTART_DELAY_MS);
    }
  };
  await launch();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await runner?.stop().catch(() => {});
    },
  };
}
