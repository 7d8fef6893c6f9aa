import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { formatValidationError } from './schema.ts';
import {
  deleteMarker,
  getMarker,
  insertMarker,
  listMarkers,
  seriesScope,
  updateMarker,
  type SeriesScope,
} from './queries.ts';
import { normalizeMarker, parseMarkerTime, type MarkerInput } from './validate.ts';

/** Deploy markers (api.md "Deploy markers"): CI hooks post, everyone reads, admins fix mistakes. */
export async function deployRoutes(app: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const { pool } = deps;
  const schemaErrorFormatter = formatValidationError as never;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/deploys',
    {
      config: { scope: 'deploys' },
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'Record a deploy marker',
        description:
          'kind is required and so is at least one of service / hosts. With external_id, a repeated POST returns the first marker ' +
          '(201 again, with header Idempotent-Replayed: true); the same external_id with a different kind, service, hosts, ' +
          'component, versions or commit is a 409.',
        ...operations['POST /api/v1/deploys'],
      },
    },
    async (req, reply) => {
      const marker = normalizeMarker(req.body as MarkerInput, Date.now());
      const out = await insertMarker(pool, marker, 'api');
      if (!out.created) reply.header('Idempotent-Replayed', 'true');
      return reply.status(201).send(out.marker);
    },
  );

  api.get(
    '/deploys',
    {
      config: { scope: 'read' },
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'List deploy markers, newest first',
        description:
          "host matches markers whose hosts include it; from/to bound `at` (inclusive); series_id keeps the markers that can explain a change in that series (its service, an edge's callee, or a host feeding it: the rule attribution uses).",
        ...operations['GET /api/v1/deploys'],
      },
    },
    async (req) => {
      const q = req.query;
      const now = Date.now();
      const fromMs = q.from !== undefined ? parseTime(q.from, now, 'from') : undefined;
      const toMs = q.to !== undefined ? parseTime(q.to, now, 'to') : undefined;
      if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
        throw badRequest('"from" must not be after "to"');
      let relevantTo: SeriesScope | undefined;
      if (q.series_id !== undefined) {
        relevantTo = (await seriesScope(pool, q.series_id)) ?? undefined;
        if (!relevantTo) throw badRequest(`series_id: series ${q.series_id} does not exist`);
      }
      const deploys = await listMarkers(pool, {
        relevantTo,
        service: q.service,
        host: q.host,
        kind: q.kind,
        source: q.source,
        fromMs,
        toMs,
        limit: q.limit ?? 500,
      });
      return { deploys };
    },
  );

  api.get(
    '/deploys/:id',
    {
      config: { scope: 'read' },
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'One deploy marker',
        ...operations['GET /api/v1/deploys/:id'],
      },
    },
    async (req) => {
      const m = await getMarker(pool, req.params.id);
      if (!m) throw notFound(`deploy marker ${req.params.id} does not exist`);
      return m;
    },
  );

  api.patch(
    '/deploys/:id',
    {
      config: { scope: 'admin' },
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: "Correct a marker's time and/or description (admin)",
        ...operations['PATCH /api/v1/deploys/:id'],
      },
    },
    async (req) => {
      const body = req.body;
      if (body.at === undefined && body.description === undefined)
        throw badRequest('nothing to change: send "at" and/or "description"');
      const at = body.at !== undefined ? parseMarkerTime(body.at, Date.now()) : undefined;
      const description =
        body.description === undefined ? undefined : body.description?.trim() || null;
      const m = await updateMarker(pool, req.params.id, { at, description });
      if (!m) throw notFound(`deploy marker ${req.params.id} does not exist`);
      return m;
    },
  );

  api.delete(
    '/deploys/:id',
    {
      config: { scope: 'admin' },
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'Delete a marker (admin)',
        ...operations['DELETE /api/v1/deploys/:id'],
      },
    },
    async (req, reply) => {
      if (!(await deleteMarker(pool, req.params.id)))
        throw notFound(`deploy marker ${req.params.id} does not exist`);
      return reply.status(204).send(null);
    },
  );
}
