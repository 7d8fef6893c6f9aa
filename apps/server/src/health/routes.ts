import type { FastifyInstance } from 'fastify';
import { HealthStatus as Status } from '@onset/contract';
import type { Pool } from '../db/pool.ts';

export async function healthRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'Liveness: the process is serving', response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));
  app.get(
    '/readyz',
    { schema: { tags: ['health'], summary: 'Readiness: the database answers', response: { 200: Status, 503: Status } } },
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
