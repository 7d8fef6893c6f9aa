import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { getRegression, saveHints } from '../regressions/store.ts';
import { regressionEvidence } from './evidence.ts';

/** api.md "Evidence": the spans, attributes and known mechanisms behind a regression. */
export async function evidenceRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/regressions/:id/evidence',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['regressions'],
        summary: 'Evidence for a regression: exemplar spans, attribute lifts, hints',
        description:
          'From the raw spans kept around the onset (ONSET_RAW_RETENTION, 48 h by default): typical and slowest calls before and after, attribute values over-represented among slow calls after the onset, and known mechanisms the numbers match.',
        ...operations['GET /api/v1/regressions/:id/evidence'],
      },
    },
    async (req) => {
      const id = req.params.id;
      const r = /^\d{1,18}$/.test(id) ? await getRegression(ctx.pool, id) : null;
      if (!r) throw notFound(`regression ${id} does not exist`);
      const e = await regressionEvidence(ctx.pool, r, {
        traceUrlTemplate: ctx.config.traceUrlTemplate,
      });
      // The list's hints were computed when detection opened it, often on fewer calls: keep them current.
      if (JSON.stringify(e.hints) !== JSON.stringify(r.hints))
        await saveHints(ctx.pool, r.id, e.hints);
      return e;
    },
  );
}
