import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { notFound } from '../http/errors.ts';
import { getSeries, stepHistograms } from './queries.ts';
import { parseAttribute, parseStepRange } from './range.ts';

/**
 * Chart data for the web UI beyond plain quantiles:
 * - heatmap: the raw log-bucket histogram of every step (sparse), so the UI
 *   draws time × log-latency cells with the same bucket maths as the server
 *   (`bucketUpper()` from @onset/core) and can coarsen rows itself;
 * - cohorts: the cohort attribute values (os.version, service.version,
 *   dependency.*, ...) of the resources feeding a series, for the cohort split.
 */
/** Heatmaps stay readable (and responses small) up to this many columns. */
const MAX_COLUMNS = 5_000;

export async function heatmapRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/series/:id/heatmap',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'Latency heatmap: the log-bucket histogram of each step (time × log-latency counts)',
        ...operations['GET /api/v1/series/:id/heatmap'],
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const { fromMs, toMs, stepMs } = parseStepRange(req.query, {
        steps: MAX_COLUMNS,
        name: 'columns',
      });
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

  api.get(
    '/series/:id/cohorts',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'Cohort attribute values (os.version, service.version, dependency.*, ...) of the hosts feeding a series',
        ...operations['GET /api/v1/series/:id/cohorts'],
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
