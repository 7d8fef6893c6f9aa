import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { slosWatchingSeries } from './membership.ts';

export async function sloMembershipRoutes(
  app: FastifyInstance,
  deps: { pool: Pool },
): Promise<void> {
  const { pool } = deps;
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/slos/watching',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['slos'],
        summary:
          "Which SLOs watch each series (the selector as the SLO counts it, name_match by PostgreSQL's regex)",
        ...operations['GET /api/v1/slos/watching'],
      },
    },
    async (req) => ({
      series: await slosWatchingSeries(pool, [...new Set(req.query.series_id.split(','))]),
    }),
  );
}
