import type { FastifyInstance } from 'fastify';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';

export async function healthRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'Liveness: the process is serving', ...operations['GET /healthz'] } }, async () => ({
    status: 'ok',
  }));
  app.get(
    '/readyz',
    { schema: { tags: ['health'], summary: 'Readiness: the database answers', ...operations['GET /readyz'] } },
    async (_req, reply) => {
      try {
        await deps.pool.query('SELECT 1');
        return { status: 'ready', database: 'ok' };
      } catch (err) {
        reply.header('Retry-After', '5');
        return reply.status(503).send({ status: 'not ready', database: (err as Error).message });
      }
    },
  );
}
