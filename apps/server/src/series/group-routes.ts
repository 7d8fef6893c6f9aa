import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { getSeries } from './queries.ts';
import { parseStepRange } from './range.ts';
import { seriesGroups } from './groups.ts';

/** Steps per group answered at most (up to 20 groups, 4 quantiles each). */
export const MAX_GROUP_STEPS = 5_000;

/** The quantiles of `q` (default 0.5,0.99), checked. */
export function parseQuantiles(text: string | undefined): number[] {
  const qs = (text ?? '0.5,0.99').split(',').map((x) => Number(x.trim()));
  if (qs.some((x) => !(x >= 0 && x <= 1)) || qs.length > 4)
    throw badRequest('q must be up to 4 numbers between 0 and 1');
  return qs;
}

/** api.md "Series": one series grouped by host or by a resource attribute, one line each. */
export async function seriesGroupRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/series/:id/groups',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'A series grouped by host, service.version, os.version or any resource attribute: per group its hosts, calls and quantiles per step',
        ...operations['GET /api/v1/series/:id/groups'],
      },
    },
    async (req, reply) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const { fromMs, toMs, stepMs } = parseStepRange(req.query, {
        steps: MAX_GROUP_STEPS,
        name: 'steps',
      });
      const qs = parseQuantiles(req.query.q);
      const by = req.query.by;
      const found = await seriesGroups(
        pool,
        { seriesId: s.id, fromMs, toMs, stepMs },
        by,
        qs,
        req.query.limit ?? 8,
        req.query.host,
      );
      reply.serializer(JSON.stringify);
      return {
        series_id: s.id,
        by,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        step_ms: stepMs,
        host: req.query.host ?? null,
        groups: found.groups,
        total_groups: found.total,
      };
    },
  );
}
