import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { getRegression, saveHints } from '../regressions/store.ts';
import { getSeries } from '../series/queries.ts';
import { regressionEvidence } from './evidence.ts';
import { checkCompare, compareSelection } from './compare.ts';
import { readTrace } from './trace.ts';
import { seriesSignatures } from './signatures.ts';

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

  api.get(
    '/traces/:trace_id',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['traces'],
        summary: "A trace's stored spans: service, name, kind, timing and attributes",
        description:
          'Every span Onset received keeps its row for ONSET_RAW_RETENTION (48 h by default); exemplars also keep their attributes (the others answer attributes null). 404 when no span of the trace is stored.',
        ...operations['GET /api/v1/traces/:trace_id'],
      },
    },
    async (req) => {
      const id = req.params.trace_id.toLowerCase();
      if (/^0+$/.test(id))
        throw badRequest('trace_id must not be all zeros (an invalid W3C trace id)');
      const t = await readTrace(ctx.pool, id, ctx.config.traceUrlTemplate);
      if (!t)
        throw notFound(
          `no span of trace ${id} is stored (raw spans are kept ${Math.round(ctx.config.rawRetentionMs / 3_600_000)} h)`,
        );
      return t;
    },
  );

  api.get(
    '/series/:id/compare',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          "A selection of a window's calls (a time range, a latency band) against the rest, by attribute",
        description:
          'From the exemplar spans kept within ONSET_RAW_RETENTION; the window is at most 24 h.',
        ...operations['GET /api/v1/series/:id/compare'],
      },
    },
    async (req) => {
      const s = await getSeries(ctx.pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const now = Date.now();
      const q = req.query;
      const fromMs = parseTime(q.from ?? 'now-6h', now, 'from');
      const toMs = parseTime(q.to ?? 'now', now, 'to');
      const request = {
        fromMs,
        toMs,
        selFromMs: q.sel_from === undefined ? fromMs : parseTime(q.sel_from, now, 'sel_from'),
        selToMs: q.sel_to === undefined ? toMs : parseTime(q.sel_to, now, 'sel_to'),
        minMs: q.min_ms ?? null,
        maxMs: q.max_ms ?? null,
      };
      checkCompare(request);
      return compareSelection(ctx.pool, { ...s, series_id: s.id }, request, {
        rawRetentionMs: ctx.config.rawRetentionMs,
        traceUrlTemplate: ctx.config.traceUrlTemplate,
        nowMs: now,
      });
    },
  );

  api.get(
    '/series/:id/signatures',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          "Known mechanisms a series' calls show in a window, whether or not anything changed",
        description:
          'From the exemplar spans kept within ONSET_RAW_RETENTION; the window is at most 24 h. A regression’s hints compare before and after its onset; these need no onset (a Nagle tail present from the first minute).',
        ...operations['GET /api/v1/series/:id/signatures'],
      },
    },
    async (req) => {
      const s = await getSeries(ctx.pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const now = Date.now();
      const fromMs = parseTime(req.query.from ?? 'now-1h', now, 'from');
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      return seriesSignatures(ctx.pool, { ...s, series_id: s.id }, fromMs, toMs);
    },
  );
}
