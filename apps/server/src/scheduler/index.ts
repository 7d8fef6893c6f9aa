import { Logger, run, type Runner, type TaskList } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import { runMaintenance } from '../maintenance/retention.ts';
import { observeJobs } from '../observability/jobs.ts';
import { inferMarkers } from '../deploys/infer.ts';
import { pairEdges } from '../edges/pairing.ts';
import { Registry } from '../otlp/registry.ts';
import { sloTasks } from '../slos/tasks.ts';
import { regressionTasks } from '../regressions/tasks.ts';

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
  const slo = sloTasks({ config, pool, log });
  const regressions = regressionTasks({ pool, registry, partitions, log });
  const taskList: TaskList = {
    ...slo.tasks,
    ...regressions.tasks,
    maintenance: async () => {
      const r = await runMaintenance(pool, partitions, config);
      if (r.dropped.length) log.info({ dropped: r.dropped }, 'retention dropped partitions');
    },
    pair_edges: async () => {
      const r = await pairEdges(pool, registry, partitions);
      if (r.pairs) log.debug(r, 'paired client and server spans');
    },
    infer_deploys: async () => {
      const r = await inferMarkers(pool);
      if (r.created || r.extended) log.info(r, 'inferred deploy markers');
    },
  };
  const crontab = [
    '* * * * * maintenance ?max=1&jobKey=maintenance',
    '* * * * * infer_deploys ?max=1&jobKey=infer_deploys',
    '* * * * * pair_edges ?max=1&jobKey=pair_edges',
    ...slo.crontab,
    ...regressions.crontab,
  ].join('\n');
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
      observeJobs(runner.events);
      runner.promise.catch((err: Error) => {
        log.warn({ err: err.message }, 'scheduler stopped; restarting when the database answers');
        runner = null;
        if (!stopped) timer = setTimeout(() => void launch(), RESTART_DELAY_MS);
      });
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
