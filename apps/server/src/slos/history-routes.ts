import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Pool } from '../db/pool.ts';
import type { ScopeGuard } from '../auth/plugin.ts';
import { badRequest } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { getSlo, notFoundSlo } from './store.ts';
import { sloHistory } from './history.ts';

const NNum = Type.Union([Type.Number(), Type.Null()]);
const Values = Type.Array(NNum);
const Times = Type.Array(Type.Number(), { description: 'end of each step, epoch ms' });

const HistoryQuery = Type.Object({
  from: Type.Optional(
    Type.String({ description: 'RFC 3339, epoch ms or relative like now-6h; default now-6h' }),
  ),
  to: Type.Optional(Type.String({ description: 'RFC 3339, epoch ms or now; default now' })),
});

const Tier = Type.Object({
  name: Type.String(),
  severity: Type.String(),
  long: Type.String(),
  short: Type.String(),
  enabled: Type.Boolean(),
  factor: Type.Number({ description: 'burn rate at which this tier alerts, for this SLO window' }),
  burn_long: NNum,
  burn_short: NNum,
  events_long: Type.Number(),
  events_short: Type.Number(),
  firing: Type.Boolean(),
});

const HistoryResponse = Type.Object({
  slo_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  objective: Type.Number(),
  threshold_ms: Type.Number(),
  window: Type.String(),
  window_ms: Type.Number(),
  series_ids: Type.Array(Type.String()),
  tiers: Type.Array(Tier),
  budget_remaining: Type.Number(),
  exhaustion_ms: NNum,
  burn: Type.Object({
    step_ms: Type.Number(),
    t: Times,
    lines: Type.Array(
      Type.Object({
        tier: Type.String(),
        window: Type.String(),
        factor: Type.Number(),
        severity: Type.String(),
        enabled: Type.Boolean(),
        values: Values,
      }),
    ),
  }),
  budget: Type.Object({ step_ms: Type.Number(), t: Times, values: Values }),
});

/** Ranges longer than this would read more history than any chart shows. */
const MAX_RANGE_MS = 400 * 86_400_000;

export async function sloHistoryRoutes(
  app: FastifyInstance,
  deps: { pool: Pool; guard: ScopeGuard },
): Promise<void> {
  const { pool, guard } = deps;
  app.get<{ Params: { id: string }; Querystring: Static<typeof HistoryQuery> }>(
    '/api/v1/slos/:id/history',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['slos'],
        summary:
          'Burn rate per alert tier (with the factor it alerts at) and error budget left over time, computed from every series the SLO watches',
        params: Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$' }) }),
        querystring: HistoryQuery,
        response: { 200: HistoryResponse },
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
