import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations, type Verdict } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { notFound } from '../http/errors.ts';
import { getMarker } from '../deploys/queries.ts';
import { formatValidationError } from '../deploys/schema.ts';

/** Deploy verdicts (api.md "Deploy verdicts", docs/verdicts.md). */
export async function verdictRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/deploys/:id/verdict',
    {
      config: { scope: 'read' },
      schemaErrorFormatter: formatValidationError as never,
      schema: {
        tags: ['deploys'],
        summary: 'Whether a deploy made latency worse: pending | pass | fail | inconclusive',
        ...operations['GET /api/v1/deploys/:id/verdict'],
      },
    },
    async (req): Promise<Verdict> => {
      const m = await getMarker(pool, req.params.id);
      if (!m) throw notFound(`deploy marker ${req.params.id} does not exist`);
      // Intermediate: the contract's shape, always pending until the engine lands.
      const at = m.at;
      const windowMs = 600_000;
      const end = new Date(Date.parse(at) + windowMs).toISOString();
      return {
        deploy_id: m.id,
        verdict: 'pending',
        reason: 'the verdict engine is not deployed on this server yet',
        decided_at: null,
        evaluated_at: new Date().toISOString(),
        method: 'before_after',
        method_reason: '',
        windows: {
          baseline: { from: new Date(Date.parse(at) - windowMs).toISOString(), to: at },
          candidate: { from: at, to: end },
          drift_guard: null,
        },
        canary_hosts: [],
        baseline_hosts: [],
        thresholds: {
          p50_ratio: 1.1,
          p99_ratio: 1.2,
          min_count: 300,
          alpha: 0.01,
          window_ms: windowMs,
        },
        regressions: [],
        series_total: 0,
        series: [],
      };
    },
  );
}
