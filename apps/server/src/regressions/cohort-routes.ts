import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations, type CohortSide } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { parseStepRange } from '../series/range.ts';
import { groupColumns, groupedStepHistograms } from '../series/groups.ts';
import { MAX_GROUP_STEPS, parseQuantiles } from '../series/group-routes.ts';
import { getRegression } from './store.ts';

/**
 * api.md "Regressions": a regression's cohort as two lines, its slow hosts and
 * the fast rest (the hosts attribution put on each side), so a chart draws each
 * side's levels over the line they describe.
 */
export async function regressionCohortRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/regressions/:id/cohort',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['regressions'],
        summary:
          "A regression's series split by its cohort: the slow hosts' quantiles per step and the fast hosts'",
        ...operations['GET /api/v1/regressions/:id/cohort'],
      },
    },
    async (req, reply) => {
      const id = req.params.id;
      const r = /^\d{1,18}$/.test(id) ? await getRegression(ctx.pool, id) : null;
      if (!r) throw notFound(`regression ${id} does not exist`);
      const { fromMs, toMs, stepMs } = parseStepRange(req.query, {
        steps: MAX_GROUP_STEPS,
        name: 'steps',
      });
      const qs = parseQuantiles(req.query.q);
      const c = r.cohort;
      const sides: CohortSide[] = [];
      if (c) {
        const slow = new Set(c.slow_hosts);
        const fast = new Set(c.fast_hosts);
        const groups = await groupedStepHistograms(
          ctx.pool,
          { seriesId: r.series_id, fromMs, toMs, stepMs },
          (res): 'slow' | 'fast' | undefined =>
            slow.has(res.host) ? 'slow' : fast.has(res.host) ? 'fast' : undefined,
        );
        for (const side of ['slow', 'fast'] as const) {
          const g = groups.get(side);
          sides.push({
            side,
            values: side === 'slow' ? c.slow : c.fast,
            hosts: side === 'slow' ? c.slow_hosts : c.fast_hosts,
            levels: c.levels?.[side] ?? null,
            count: g?.count ?? 0,
            columns: g
              ? groupColumns(g.steps, qs)
              : { t: [], count: [], q: Object.fromEntries(qs.map((q) => [String(q), []])) },
          });
        }
      }
      reply.serializer(JSON.stringify);
      return {
        regression_id: r.id,
        series_id: r.series_id,
        attribute: c?.attribute ?? null,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        step_ms: stepMs,
        sides,
      };
    },
  );
}
