/**
 * Self-observation: GET /metrics in the Prometheus text format.
 *
 * Process-wide metrics (detection passes, webhook deliveries, jobs) live in
 * metrics.ts; this plugin adds what belongs to one server instance: ingest
 * counters (IngestStats), HTTP requests, the PostgreSQL pool and the depth of
 * the durable queues, read when scraped.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { IngestStats } from '../otlp/stats.ts';
import { HttpError } from '../http/errors.ts';
import { metricsRegistry } from './metrics.ts';
import type { CardinalityGuard } from '../cardinality/guard.ts';
import { registerCardinalityMetrics } from '../cardinality/metrics.ts';

/** What the plugin reads: the pool (queue depths, pool gauges), ingest counters and the metrics token. */
interface ServerParts {
  config: Pick<Config, 'metricsToken'>;
  pool: Pool;
  stats: IngestStats;
  /** Its cardinality guard's drops and limits are exposed too. */
  registry?: { guard?: CardinalityGuard };
}

/** Queue depth must never make a scrape hang on a slow or absent database. */
const QUEUE_QUERY_TIMEOUT_MS = 2000;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

interface QueueRow {
  queue: string;
  state: string;
  n: number;
}

/**
 * Pending work in PostgreSQL: graphile-worker jobs per task (ready = due now,
 * delayed = retry or schedule in the future, running = locked by a worker),
 * plus any outbox tables other features keep (webhook deliveries).
 */
async function queueDepths(pool: Pool): Promise<QueueRow[]> {
  const present = await pool.query<{ jobs: string | null; outbox: string | null }>(
    `SELECT to_regclass('graphile_worker.jobs')::text AS jobs, to_regclass('public.webhook_deliveries')::text AS outbox`,
  );
  const rows: QueueRow[] = [];
  if (present.rows[0]?.jobs) {
    const r = await pool.query<QueueRow>(
      `SELECT task_identifier AS queue,
              CASE WHEN locked_at IS NOT NULL THEN 'running' WHEN run_at > now() THEN 'delayed' ELSE 'ready' END AS state,
              count(*)::int AS n
         FROM graphile_worker.jobs
        WHERE attempts < max_attempts OR locked_at IS NOT NULL
        GROUP BY 1, 2`,
    );
    rows.push(...r.rows);
  }
  if (present.rows[0]?.outbox) {
    // Undelivered webhook payloads (the at-least-once outbox of migrations/0004).
    const r = await pool.query<QueueRow>(
      `SELECT 'webhook_outbox' AS queue,
              CASE WHEN leased_until > now() THEN 'running' WHEN next_attempt_at > now() THEN 'delayed' ELSE 'ready' END AS state,
              count(*)::int AS n
         FROM webhook_deliveries WHERE status = 'pending' GROUP BY 1, 2`,
    );
    rows.push(...r.rows);
  }
  return rows;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

function instanceMetrics(ctx: ServerParts, registry: Registry) {
  const { stats, pool } = ctx;
  new Counter({
    name: 'onset_ingest_accepted_total',
    help: 'Items stored by OTLP ingest (kind: spans | data_points); rate() of this is the ingest rate',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const kind of ['spans', 'data_points'])
        this.inc({ kind }, stats.acceptedByKind.get(kind) ?? 0);
      for (const [kind, n] of stats.acceptedByKind)
        if (kind !== 'spans' && kind !== 'data_points') this.inc({ kind }, n);
    },
  });
  new Counter({
    name: 'onset_ingest_duplicates_total',
    help: 'Items skipped by OTLP ingest because they were already stored (client retries)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, n] of stats.duplicatesByKind) this.inc({ kind }, n);
    },
  });
  new Counter({
    name: 'onset_ingest_rejected_total',
    help: 'Spans, data points or requests refused by OTLP ingest, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of stats.rejectedByReason) this.inc({ reason }, n);
    },
  });
  new Gauge({
    name: 'onset_db_pool_connections',
    help: 'PostgreSQL pool connections by state (idle | active) and requests waiting for one (waiting)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'active' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  new Gauge({
    name: 'onset_db_pool_max_connections',
    help: 'Size limit of the PostgreSQL pool',
    registers: [registry],
    collect() {
      this.set((pool as unknown as { options?: { max?: number } }).options?.max ?? 0);
    },
  });
  const queueUp = new Gauge({
    name: 'onset_queue_depth_up',
    help: '1 when the queue depths below could be read from PostgreSQL at this scrape',
    registers: [registry],
  });
  new Gauge({
    name: 'onset_queue_depth',
    help: 'Pending durable work: graphile-worker jobs per task and the webhook outbox (state: ready | delayed | running)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const rows = await withTimeout(queueDepths(pool), QUEUE_QUERY_TIMEOUT_MS);
        for (const r of rows) this.set({ queue: r.queue, state: r.state }, r.n);
        queueUp.set(1);
      } catch {
        queueUp.set(0);
      }
    },
  });

  if (ctx.registry?.guard) registerCardinalityMetrics(ctx.registry.guard, registry);

  const requests = new Counter({
    name: 'onset_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'onset_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { requests, durations };
}

export interface SelfObservationOptions extends ServerParts {
  /** Serve GET /metrics on this listener (the main one); the OTLP listener only counts requests. */
  metricsRoute?: boolean;
}

/** One set per server: both listeners (API and OTLP) share the ctx's IngestStats, and so their metrics. */
const perServer = new WeakMap<
  object,
  { registry: Registry } & ReturnType<typeof instanceMetrics>
>();

function serverMetrics(ctx: ServerParts) {
  let m = perServer.get(ctx.stats);
  if (!m) {
    const registry = new Registry();
    m = { registry, ...instanceMetrics(ctx, registry) };
    perServer.set(ctx.stats, m);
  }
  return m;
}

async function selfObservation(app: FastifyInstance, ctx: SelfObservationOptions): Promise<void> {
  const { registry, requests, durations } = serverMetrics(ctx);

  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    // Route patterns, never raw URLs: label values must stay a small set.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status_code: String(reply.statusCode) });
    durations.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  if (ctx.metricsRoute === false) return;
  const token = ctx.config.metricsToken;
  app.get(
    '/metrics',
    {
      logLevel: 'warn',
      schema: {
        tags: ['observability'],
        summary: 'Prometheus metrics of this server',
        description:
          'Prometheus text exposition: ingest rate and rejections, HTTP requests, queue depths, detection passes, ' +
          'webhook deliveries, DB pool usage. Open by default; with ONSET_METRICS_TOKEN set it needs `Authorization: Bearer <that token>`.',
        security: token ? [{ bearer: [] }] : [],
      },
    },
    async (request, reply) => {
      if (token) {
        const m = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
        if (!m)
          throw new HttpError(
            401,
            'unauthorized',
            'missing bearer token (Authorization: Bearer <ONSET_METRICS_TOKEN>)',
          );
        if (!sameSecret(m[1]!.trim(), token))
          throw new HttpError(401, 'unauthorized', 'invalid metrics token');
      }
      const merged = Registry.merge([metricsRegistry, registry]);
      const body = await merged.metrics();
      return reply.type(merged.contentType).send(body);
    },
  );
}

/** Hooks must reach every route of the app, not only this plugin's: not encapsulated (fastify-plugin). */
export const selfObservationPlugin = fp(selfObservation, {
  name: 'onset-self-observation',
  fastify: '5.x',
});
