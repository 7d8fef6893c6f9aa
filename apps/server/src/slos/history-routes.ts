import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { badRequest } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { getSlo, notFoundSlo } from './store.ts';
import { sloHistory } from './history.ts';

/** Ranges longer than this would read more history than any chart shows. */
const MAX_RANGE_MS = 400 * 86_400_000;

export async function sloHistoryRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/slos/:id/history',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['slos'],
        summary:
          'Burn rate per alert tier (with the factor it alerts at) and error budget left over time, computed from every series the SLO watches',
        ...operations['GET /api/v1/slos/:id/history'],
      },
    },
    async (req) => {
      const now = Date.now();
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      const fromMs = parseTime(req.query.from ?? 'now-6h', now, 'from');
      if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
      if (toMs - fromMs > MAX_RANGE_MS) throw badRequest('the range may span at most 400d');
      const slo = await getSlo(pool, req.params.id);
      if (!slo) throw notFoundSlo(req.params.id);
      return sloHistory(pool, slo, { fromMs, toMs }, now);
    },
  );
}
