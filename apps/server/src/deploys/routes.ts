import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Pool } from '../db/pool.ts';
import type { ScopeGuard } from '../auth/plugin.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import {
  ErrorBody,
  formatValidationError,
  IdParams,
  ListQuery,
  Marker,
  MarkerBody,
  MarkerPatch,
} from './schema.ts';
import { deleteMarker, getMarker, insertMarker, listMarkers, updateMarker } from './queries.ts';
import { normalizeMarker, parseMarkerTime, type MarkerInput } from './validate.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

/** Deploy markers (api.md "Deploy markers"): CI hooks post, everyone reads, admins fix mistakes. */
export async function deployRoutes(
  app: FastifyInstance,
  deps: { pool: Pool; guard: ScopeGuard },
): Promise<void> {
  const { pool, guard } = deps;
  const schemaErrorFormatter = formatValidationError as never;

  app.post<{ Body: Static<typeof MarkerBody> }>(
    '/api/v1/deploys',
    {
      onRequest: guard('deploys'),
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'Record a deploy marker',
        description:
          'kind is required and so is at least one of service / hosts. With external_id, a repeated POST returns the first marker ' +
          '(201 again, with header Idempotent-Replayed: true); the same external_id with a different kind, service, hosts, ' +
          'component, versions or commit is a 409.',
        body: MarkerBody,
        response: { 201: Marker, ...errors },
      },
    },
    async (req, reply) => {
      const marker = normalizeMarker(req.body as MarkerInput, Date.now());
      const out = await insertMarker(pool, marker, 'api');
      if (!out.created) reply.header('Idempotent-Replayed', 'true');
      return reply.status(201).send(out.marker);
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/api/v1/deploys',
    {
      onRequest: guard('read'),
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'List deploy markers, newest first',
        description: 'host matches markers whose hosts include it; from/to bound `at` (inclusive).',
        querystring: ListQuery,
        response: { 200: Type.Object({ deploys: Type.Array(Marker) }), ...errors },
      },
    },
    async (req) => {
      const q = req.query;
      const now = Date.now();
      const fromMs = q.from !== undefined ? parseTime(q.from, now, 'from') : undefined;
      const toMs = q.to !== undefined ? parseTime(q.to, now, 'to') : undefined;
      if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
        throw badRequest('"from" must not be after "to"');
      const deploys = await listMarkers(pool, {
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

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/deploys/:id',
    {
      onRequest: guard('read'),
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'One deploy marker',
        params: IdParams,
        response: { 200: Marker, ...errors },
      },
    },
    async (req) => {
      const m = await getMarker(pool, req.params.id);
      if (!m) throw notFound(`deploy marker ${req.params.id} does not exist`);
      return m;
    },
  );

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof MarkerPatch> }>(
    '/api/v1/deploys/:id',
    {
      onRequest: guard('admin'),
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: "Correct a marker's time and/or description (admin)",
        params: IdParams,
        body: MarkerPatch,
        response: { 200: Marker, ...errors },
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

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/api/v1/deploys/:id',
    {
      onRequest: guard('admin'),
      schemaErrorFormatter,
      schema: {
        tags: ['deploys'],
        summary: 'Delete a marker (admin)',
        params: IdParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (req, reply) => {
      if (!(await deleteMarker(pool, req.params.id)))
        throw notFound(`deploy marker ${req.params.id} does not exist`);
      return reply.status(204).send();
    },
  );
}
