/**
 * Optional push of deploy markers (and regressions, once their view exists)
 * to Grafana's HTTP API as organisation-wide annotations, so they show on
 * any dashboard, not only the provisioned ones that read the SQL views.
 *
 * On when GRAFANA_URL and GRAFANA_TOKEN (a service account token with the
 * annotations:write permission) are both set. A cursor per kind in
 * grafana_annotation_cursor remembers what was posted; the cursor row is
 * locked with SKIP LOCKED, so with N servers exactly one pushes each batch.
 * Delivery is at least once: a batch that fails part-way is retried from
 * the first unposted marker on the next tick.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { JobHelpers } from 'graphile-worker';
import type { Config } from '../config.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { isOutage } from '../db/availability.ts';
import type { FeatureJobs } from '../context.ts';
import { grafanaAnnotations } from './metrics.ts';

interface GrafanaTarget {
  url: string;
  token: string;
}

/**
 * kind -> the view that renders it (columns id, time, text, tags). Posted
 * once, when first seen, as a point at its time: a regression is marked at
 * its onset (its end is not known yet when it is posted).
 */
const SOURCES: Record<string, { view: string; timeEnd?: string }> = {
  deploy: { view: 'grafana_deploy_annotations' },
  regression: { view: 'grafana_regression_annotations' },
};

const BATCH = 100;
const TICK_MS = 3_000;
/** The self-re-queued run (the cron run has its own key, so the two never replace each other mid-run). */
const NEXT_KEY = 'grafana_annotations_next';
const POST_TIMEOUT_MS = 5_000;

interface Row {
  id: number;
  time: Date;
  timeend?: Date | null;
  text: string;
  tags: string;
}

async function post(target: GrafanaTarget, kind: string, row: Row): Promise<void> {
  const body = {
    time: row.time.getTime(),
    ...(row.timeend ? { timeEnd: row.timeend.getTime() } : {}),
    tags: ['onset', ...row.tags.split(',').filter(Boolean)],
    text: row.text,
  };
  let res: Response;
  try {
    res = await fetch(
      new URL('api/annotations', target.url.endsWith('/') ? target.url : `${target.url}/`),
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      },
    );
  } catch (err) {
    grafanaAnnotations.inc({ kind, result: 'network_error' });
    throw err;
  }
  if (!res.ok) {
    grafanaAnnotations.inc({ kind, result: 'http_error' });
    throw new Error(
      `Grafana answered ${res.status} to POST /api/annotations: ${(await res.text()).slice(0, 200)}`,
    );
  }
  grafanaAnnotations.inc({ kind, result: 'success' });
}

/** Post every not-yet-posted annotation of each kind; returns how many were posted. */
async function pushGrafanaAnnotations(pool: Pool, target: GrafanaTarget): Promise<number> {
  let posted = 0;
  for (const [kind, src] of Object.entries(SOURCES)) {
    const exists = await pool.query<{ v: string | null }>(`SELECT to_regclass($1)::text AS v`, [
      src.view,
    ]);
    if (!exists.rows[0]?.v) continue;
    const failed = await withTransaction(pool, async (client) => {
      const cur = await client.query<{ last_id: number }>(
        `SELECT last_id FROM grafana_annotation_cursor WHERE kind = $1 FOR UPDATE SKIP LOCKED`,
        [kind],
      );
      if (!cur.rows[0]) return null; // another server holds this kind right now (nothing written)
      let last = Number(cur.rows[0].last_id);
      const { rows } = await client.query<Row>(
        `SELECT id, time, ${src.timeEnd ? `${src.timeEnd} AS timeend,` : ''} text, tags
           FROM ${src.view} WHERE id > $1 ORDER BY id LIMIT ${BATCH}`,
        [last],
      );
      let error: { err: unknown } | null = null;
      try {
        for (const row of rows) {
          await post(target, kind, row);
          last = Number(row.id);
          posted++;
        }
      } catch (err) {
        error = { err };
      }
      // Keep the progress of a batch that failed part-way: committed, then the failure thrown.
      await client.query(
        `UPDATE grafana_annotation_cursor SET last_id = $2, pushed_at = now() WHERE kind = $1`,
        [kind, last],
      );
      return error;
    });
    if (failed) throw failed.err;
  }
  return posted;
}

/**
 * The push as a job: `grafana_annotations` queued at startup and every
 * minute by cron (so it restarts after an outage), and re-queued by itself
 * every few seconds (with backoff while Grafana fails). One job key across
 * the cluster, so N servers keep one chain. No jobs without GRAFANA_URL and
 * GRAFANA_TOKEN.
 */
export function grafanaAnnotationTasks(deps: {
  config: Pick<Config, 'grafanaUrl' | 'grafanaToken'>;
  pool: Pool;
  log: FastifyBaseLogger;
}): FeatureJobs {
  const { grafanaUrl, grafanaToken } = deps.config;
  if (!grafanaUrl || !grafanaToken) return { tasks: {}, crontab: [] };
  const { pool, log } = deps;
  const target = { url: grafanaUrl, token: grafanaToken };
  let failures = 0;
  const again = (helpers: JobHelpers, ms: number) =>
    helpers.addJob(
      'grafana_annotations',
      {},
      { runAt: new Date(Date.now() + ms), jobKey: NEXT_KEY, jobKeyMode: 'replace', maxAttempts: 1 },
    );
  return {
    tasks: {
      grafana_annotations: async (_payload, helpers) => {
        try {
          await pushGrafanaAnnotations(pool, target);
          if (failures) log.info('grafana annotations: delivering again');
          failures = 0;
          await again(helpers, TICK_MS);
        } catch (err) {
          // The database away is the scheduler's to report (once) and wait out, not a Grafana failure.
          if (isOutage(err)) throw err;
          if (!failures)
            log.warn(
              { err: (err as Error).message },
              'grafana annotations: push failed; retrying with backoff',
            );
          failures++;
          // 1 s, 2 s, 4 s ... up to 30 s: quick recovery from a blip, no hammering of a Grafana that is down.
          await again(helpers, Math.min(30_000, 1000 * 2 ** (failures - 1)));
        }
      },
    },
    crontab: ['* * * * * grafana_annotations ?max=1&jobKey=grafana_annotations'],
    startup: [{ task: 'grafana_annotations', jobKey: NEXT_KEY }],
  };
}
