import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { parseDuration } from '@onset/core';
import type { Pool } from '../db/pool.ts';
import type { ScopeGuard } from '../auth/plugin.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { getSeries, stepHistograms } from './queries.ts';
import { autoStepMs } from './routes.ts';

/**
 * Chart data for the web UI beyond plain quantiles:
 * - heatmap: the raw log-bucket histogram of every step (sparse), so the UI
 *   draws time × log-latency cells with the same bucket maths as the server
 *   (`bucketUpper()` from @onset/core) and can coarsen rows itself;
 * - cohorts: the cohort attribute values (os.version, service.version,
 *   dependency.*, ...) of the resources feeding a series, for the cohort split.
 */
const RangeQuery = Type.Object({
  from: Type.Optional(
    Type.String({ description: 'RFC 3339 or relative like now-6h; default now-6h' }),
  ),
  to: Type.Optional(Type.String({ description: 'RFC 3339 or now; default now' })),
  step: Type.Optional(
    Type.String({ description: 'e.g. 1m, 5m, 1h; default chosen for ~360 columns' }),
  ),
  host: Type.Optional(Type.String({ maxLength: 256 })),
  attribute: Type.Optional(
    Type.String({ description: 'cohort filter key=value, e.g. os.version=4.15.0-36' }),
  ),
});

const HeatmapResponse = Type.Object({
  series_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  step_ms: Type.Number(),
  points: Type.Array(
    Type.Object({
      t: Type.String(),
      count: Type.Number(),
      idx: Type.Array(Type.Integer(), {
        description: 'ascending log-bucket indices (bucketUpper(i) µs is the upper edge)',
      }),
      cnt: Type.Array(Type.Number()),
    }),
  ),
});

const CohortResponse = Type.Object({
  series_id: Type.String(),
  attributes: Type.Array(
    Type.Object({
      key: Type.String(),
      values: Type.Array(
        Type.Object({
          value: Type.String(),
          hosts: Type.Array(Type.String()),
          last_seen: Type.String(),
        }),
      ),
    }),
  ),
});

/** Heatmaps stay readable (and responses small) up to this many columns. */
const MAX_COLUMNS = 5_000;

export async function heatmapRoutes(
  app: FastifyInstance,
  deps: { pool: Pool; guard: ScopeGuard },
): Promise<void> {
  const { pool, guard } = deps;

  app.get<{ Params: { id: string }; Querystring: Static<typeof RangeQuery> }>(
    '/api/v1/series/:id/heatmap',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['series'],
        summary:
          'Latency heatmap: the log-bucket histogram of each step (time × log-latency counts)',
        params: Type.Object({ id: Type.String() }),
        querystring: RangeQuery,
        response: { 200: HeatmapResponse },
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const now = Date.now();
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      const fromMs = parseTime(req.query.from ?? 'now-6h', now, 'from');
      if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
      let stepMs: number;
      try {
        stepMs = req.query.step ? parseDuration(req.query.step) : autoStepMs(toMs - fromMs);
      } catch (e) {
        throw badRequest(`step: ${(e as Error).message}`);
      }
      if (stepMs < 60_000) throw badRequest('step must be at least 1m (histograms are per minute)');
      if ((toMs - fromMs) / stepMs > MAX_COLUMNS)
        throw badRequest(`too many columns (> ${MAX_COLUMNS}); use a larger step`);
      const attribute = parseAttribute(req.query.attribute);
      const steps = await stepHistograms(pool, {
        seriesId: s.id,
        fromMs,
        toMs,
        stepMs,
        host: req.query.host,
        attribute,
      });
      const points = [...steps].map(([t, h]) => ({
        t: new Date(t).toISOString(),
        count: h.count,
        ...h.toSparse(),
      }));
      return {
        series_id: s.id,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        step_ms: stepMs,
        points,
      };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/series/:id/cohorts',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['series'],
        summary:
          'Cohort attribute values (os.version, service.version, dependency.*, ...) of the hosts feeding a series',
        params: Type.Object({ id: Type.String() }),
        response: { 200: CohortResponse },
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const { rows } = await pool.query<{
        key: string;
        value: string;
        hosts: string[];
        last_seen: Date;
      }>(
        `SELECT a.key, a.value, array_agg(DISTINCT r.host ORDER BY r.host) FILTER (WHERE r.host <> '') AS hosts,
                max(sr.last_seen) AS last_seen
           FROM series_resources sr
           JOIN resources r ON r.id = sr.resource_id,
                jsonb_each_text(r.attrs) AS a(key, value)
          WHERE sr.series_id = $1
          GROUP BY a.key, a.value
          ORDER BY a.key, max(sr.last_seen), a.value
          LIMIT 2000`,
        [s.id],
      );
      const byKey = new Map<string, Array<{ value: string; hosts: string[]; last_seen: string }>>();
      for (const r of rows) {
        const list = byKey.get(r.key) ?? [];
        list.push({
          value: r.value,
          hosts: r.hosts ?? [],
          last_seen: new Date(r.last_seen).toISOString(),
        });
        byKey.set(r.key, list);
      }
      return { series_id: s.id, attributes: [...byKey].map(([key, values]) => ({ key, values })) };
    },
  );
}

function parseAttribute(text: string | undefined): { key: string; value: string } | undefined {
  if (!text) return undefined;
  const eq = text.indexOf('=');
  if (eq <= 0) throw badRequest('attribute must look like key=value');
  return { key: text.slice(0, eq), value: text.slice(eq + 1) };
}
