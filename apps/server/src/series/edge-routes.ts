import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { getSeries } from './queries.ts';
import { parseStepRange } from './range.ts';
import { edgeViews } from './edge.ts';

/** Points per view; three views per answer. */
const MAX_POINTS = 20_000;

export async function edgeRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/series/:id/edge',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          "The client, server and gap views of the edge a series belongs to: each view's quantiles, their medians before and after an onset, and which side changed",
        ...operations['GET /api/v1/series/:id/edge'],
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const now = Date.now();
      const { fromMs, toMs, stepMs } = parseStepRange(
        req.query,
        { steps: MAX_POINTS, name: 'points' },
        now,
      );
      const qs = (req.query.q ?? '0.5,0.99').split(',').map((x) => Number(x.trim()));
      if (qs.some((x) => !(x >= 0 && x <= 1)) || qs.length > 4)
        throw badRequest('q must be up to 4 numbers between 0 and 1');
      const onsetMs =
        req.query.onset !== undefined ? parseTime(req.query.onset, now, 'onset') : undefined;
      return edgeViews(pool, s, { fromMs, toMs, stepMs, qs, onsetMs });
    },
  );
}
