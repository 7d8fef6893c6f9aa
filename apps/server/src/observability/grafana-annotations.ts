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
import type { AppContext } from '../app.ts';
import type { Pool } from '../db/pool.ts';
import { grafanaAnnotations } from './metrics.ts';

export interface GrafanaTarget {
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
    res = await fetch(new URL('api/annotations', target.url.endsWith('/') ? target.url : `${target.url}/`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(POST_TIMEOUT_MS),
    });
  } catch (err) {
    grafanaAnnotations.inc({ kind, result: 'network_error' });
    throw err;
  }
  if (!res.ok) {
    grafanaAnnotations.inc({ kind, result: 'http_error' });
    throw new Error(`Grafana answered ${res.status} to POST /api/annotations: ${(await res.text()).slice(0, 200)}`);
  }
  grafanaAnnotations.inc({ kind, result: 'success' });
}

/** Post every not-yet-posted annotation of each kind; returns how many were posted. */
export async function pushGrafanaAnnotations(pool: Pool, target: GrafanaTarget): Promise<number> {
  let posted = 0;
  for (const [kind, src] of Object.entries(SOURCES)) {
    const exists = await pool.query<{ v: string | null }>(`SELECT to_regclass($1)::text AS v`, [src.view]);
    if (!exists.rows[0]?.v) continue;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const cur = await client.query<{ last_id: number }>(
        `SELECT last_id FROM grafana_annotation_cursor WHERE kind = $1 FOR UPDATE SKIP LOCKED`,
        [kind],
      );
      if (!cur.rows[0]) {
        await client.query('ROLLBACK');
        continue; // another server holds this kind right now
      }
      let last = Number(cur.rows[0].last_id);
      const { rows } = await client.query<Row>(
        `SELECT id, time, ${src.timeEnd ? `${src.timeEnd} AS timeend,` : ''} text, tags
           FROM ${src.view} WHERE id > $1 ORDER BY id LIMIT ${BATCH}`,
        [last],
      );
      try {
        for (const row of rows) {
          await post(target, kind, row);
          last = Number(row.id);
          posted++;
        }
      } finally {
        // Keep the progress of a batch that failed part-way.
        await client.query(`UPDATE grafana_annotation_cursor SET last_id = $2, pushed_at = now() WHERE kind = $1`, [kind, last]);
        await client.query('COMMIT');
      }
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }
  return posted;
}

/** Start the periodic push when configured; null when GRAFANA_URL/GRAFANA_TOKEN are not both set. */
export function startGrafanaAnnotations(ctx: AppContext, log: FastifyBaseLogger): { stop: () => Promise<void> } | null {
  const { grafanaUrl, grafanaToken } = ctx.config;
  if (!grafanaUrl || !grafanaToken) return null;
  const target = { url: grafanaUrl, token: grafanaToken };
  let running: Promise<unknown> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  function tick(): void {
    running = pushGrafanaAnnotations(ctx.pool, target)
      .then(() => {
        if (failures) log.info('grafana annotations: delivering again');
        failures = 0;
        schedule(TICK_MS);
      })
      .catch((err: Error) => {
        if (!failures) log.warn({ err: err.message }, 'grafana annotations: push failed; retrying with backoff');
        failures++;
        // 1 s, 2 s, 4 s ... up to 30 s: quick recovery from a blip, no hammering of a Grafana that is down.
        schedule(Math.min(30_000, 1000 * 2 ** (failures - 1)));
      })
      .finally(() => {
        running = null;
      });
  }
  schedule(0);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
