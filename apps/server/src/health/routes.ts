import type { FastifyInstance } from 'fastify';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { outageReason } from '../db/availability.ts';

export async function healthRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['health'],
        summary: 'Liveness: the process is serving',
        ...operations['GET /healthz'],
      },
    },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database answers',
        ...operations['GET /readyz'],
      },
    },
    async (req, reply) => {
      try {
        await deps.pool.query('SELECT 1');
        return { status: 'ready', database: 'ok' };
      } catch (err) {
        // Anyone may ask: a fixed short reason, never the driver's text (addresses, ports, users).
        // The full error is in the server log.
        req.log.warn({ err: (err as Error).message }, 'not ready');
        reply.header('Retry-After', '5');
        return reply.status(503).send({ status: 'not ready', database: outageReason(err) });
      }
    },
  );
}
