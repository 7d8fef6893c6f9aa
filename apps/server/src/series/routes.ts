import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { getSeries, listSeries, quantileColumns, quantiles } from './queries.ts';
import { parseAttribute, parseStepRange } from './range.ts';
import { searchSeries } from './search.ts';
import { seriesOptions } from './options.ts';
import { arriving } from './arriving.ts';
import { sparkHistograms, sparkWindow, summarize } from './spark.ts';
import { parseTime } from '../http/time.ts';
import { SEGMENTS_MAX_MINUTES, seriesSegments } from './segments.ts';

const MAX_POINTS = 50_000;

export async function seriesRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/series',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary: 'List latency series',
        ...operations['GET /api/v1/series'],
      },
    },
    async (req) => listSeries(pool, req.query),
  );

  api.get(
    '/series/options',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          "The Explorer's pickers over every series: each label's values under the choices before it, and the choice that exists",
        ...operations['GET /api/v1/series/options'],
      },
    },
    async (req) => seriesOptions(pool, req.query),
  );

  api.get(
    '/arriving',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'What is arriving: per service and host, series and calls in the window, and the latest minute’s p50/p99',
        ...operations['GET /api/v1/arriving'],
      },
    },
    async (req) => {
      const now = Date.now();
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      const fromMs = parseTime(req.query.from ?? 'now-1h', now, 'from');
      if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
      return arriving(pool, fromMs, toMs);
    },
  );

  api.get(
    '/series/:id/hosts',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'One series per host: p50/p99 of the latest step with calls and a p99 sparkline, slowest first',
        ...operations['GET /api/v1/series/:id/hosts'],
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const now = Date.now();
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      const fromMs = parseTime(req.query.from ?? 'now-1h', now, 'from');
      if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
      const w = sparkWindow(fromMs, toMs);
      const byHost = await sparkHistograms(pool, [s.id], w, true);
      const hosts = [...byHost.entries()]
        .map(([host, steps]) => ({ host, ...summarize(steps, w) }))
        .sort((a, b) => (b.current.p99_ms ?? -1) - (a.current.p99_ms ?? -1));
      return {
        series_id: s.id,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        hosts,
      };
    },
  );

  api.get(
    '/series/:id/segments',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          "The window's retrospective segmentation: a line per segment, and the jumps between them (steps and shifts; never paged)",
        ...operations['GET /api/v1/series/:id/segments'],
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const now = Date.now();
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      const fromMs = parseTime(req.query.from ?? 'now-6h', now, 'from');
      if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
      if (toMs - fromMs > SEGMENTS_MAX_MINUTES * 60_000)
        throw badRequest(`the window must be at most ${SEGMENTS_MAX_MINUTES / 60} h`);
      return seriesSegments(pool, s, fromMs, toMs);
    },
  );

  api.get(
    '/series/search',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'Find series by words in their service, op, name, peer or hosts, with current p50/p99, a p99 sparkline, the open regression and the SLOs watching',
        ...operations['GET /api/v1/series/search'],
      },
    },
    async (req) => {
      const now = Date.now();
      const toMs = parseTime(req.query.to ?? 'now', now, 'to');
      const fromMs = parseTime(req.query.from ?? 'now-1h', now, 'from');
      if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
      if (req.query.q?.includes('\u0000')) throw badRequest('q must not contain NUL characters');
      const found = await searchSeries(pool, {
        q: req.query.q ?? '',
        fromMs,
        toMs,
        limit: req.query.limit ?? 50,
      });
      return { ...found, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
    },
  );

  api.get(
    '/series/:id',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary: 'One series',
        ...operations['GET /api/v1/series/:id'],
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      return s;
    },
  );

  api.get(
    '/series/:id/quantiles',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['series'],
        summary:
          'Latency quantiles per step from the log-bucketed histograms (ms, ≤2% relative error)',
        ...operations['GET /api/v1/series/:id/quantiles'],
      },
    },
    async (req, reply) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const { fromMs, toMs, stepMs } = parseStepRange(req.query, {
        steps: MAX_POINTS,
        name: 'points',
      });
      const qs = (req.query.q ?? '0.5,0.99').split(',').map((x) => Number(x.trim()));
      if (qs.some((x) => !(x >= 0 && x <= 1)) || qs.length > 10)
        throw badRequest('q must be up to 10 numbers between 0 and 1');
      const attribute = parseAttribute(req.query.attribute);
      const hq = { seriesId: s.id, fromMs, toMs, stepMs, host: req.query.host, attribute };
      const head = {
        series: s,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        step_ms: stepMs,
      };
      // Both bodies are built field by field here; a union schema would make the serializer try each shape per answer.
      reply.serializer(JSON.stringify);
      if (req.query.layout === 'columns')
        return { ...head, columns: await quantileColumns(pool, hq, qs) };
      return { ...head, points: await quantiles(pool, hq, qs) };
    },
  );
}
