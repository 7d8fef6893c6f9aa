import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { OpSchema, ViewSchema } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import type { ScopeGuard } from '../auth/plugin.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { getSeries, listSeries, quantileColumns, quantiles } from './queries.ts';
import { parseAttribute, parseStepRange, rangeQueryFields, rangeResponseFields } from './range.ts';

const SeriesSchema = Type.Object({
  id: Type.String(),
  service: Type.String(),
  op: Type.String(),
  view: Type.String(),
  name: Type.String(),
  peer: Type.Union([Type.String(), Type.Null()]),
  hosts: Type.Array(Type.String()),
  first_seen: Type.String({ format: 'date-time' }),
  last_seen: Type.String({ format: 'date-time' }),
});

const ListQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
  op: Type.Optional(OpSchema),
  view: Type.Optional(ViewSchema),
  host: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
});

const QuantileQuery = Type.Object({
  ...rangeQueryFields('e.g. 1m, 5m, 1h; default chosen for ~300 points'),
  q: Type.Optional(Type.String({ description: 'comma-separated quantiles, default 0.5,0.99' })),
  layout: Type.Optional(
    Type.Union([Type.Literal('points'), Type.Literal('columns')], {
      description:
        'points (default): one object per step; columns: one array per field, t in epoch ms (a third of the bytes, parses several times faster)',
    }),
  ),
});

const PointsBody = Type.Object({
  series: SeriesSchema,
  ...rangeResponseFields(),
  points: Type.Array(
    Type.Object({
      t: Type.String(),
      count: Type.Number(),
      q: Type.Record(Type.String(), Type.Number()),
    }),
  ),
});

const ColumnsBody = Type.Object({
  series: SeriesSchema,
  ...rangeResponseFields(),
  columns: Type.Object({
    t: Type.Array(Type.Number(), { description: 'step start, epoch ms, ascending' }),
    count: Type.Array(Type.Number()),
    q: Type.Record(Type.String(), Type.Array(Type.Number())),
  }),
});

const MAX_POINTS = 50_000;

export async function seriesRoutes(
  app: FastifyInstance,
  deps: { pool: Pool; guard: ScopeGuard },
): Promise<void> {
  const { pool, guard } = deps;
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/api/v1/series',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['series'],
        summary: 'List latency series',
        querystring: ListQuery,
        response: { 200: Type.Object({ series: Type.Array(SeriesSchema) }) },
      },
    },
    async (req) => ({ series: await listSeries(pool, req.query) }),
  );

  app.get<{ Params: { id: string }; Querystring: Static<typeof QuantileQuery> }>(
    '/api/v1/series/:id',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['series'],
        summary: 'One series',
        params: Type.Object({ id: Type.String() }),
        response: { 200: SeriesSchema },
      },
    },
    async (req) => {
      const s = await getSeries(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      return s;
    },
  );

  app.get<{ Params: { id: string }; Querystring: Static<typeof QuantileQuery> }>(
    '/api/v1/series/:id/quantiles',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['series'],
        summary:
          'Latency quantiles per step from the log-bucketed histograms (ms, ≤2% relative error)',
        params: Type.Object({ id: Type.String() }),
        querystring: QuantileQuery,
        response: { 200: Type.Union([PointsBody, ColumnsBody]) },
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
