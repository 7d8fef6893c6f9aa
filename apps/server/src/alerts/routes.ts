import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { OpSchema, parseDuration } from '@onset/contract';
import type { AppContext } from '../app.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { acknowledgeAlert } from './state.ts';
import { alertEvents, getAlert, listAlerts, type AlertRow } from './store.ts';
import { alertUrl } from './snapshot.ts';
import { baseUrlOf } from '../webhooks/routes.ts';

const IdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$' }) });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const NStr = Nullable(Type.String());

const AlertSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: 'slo_burn | regression' }),
    severity: Type.String({ description: 'page | ticket' }),
    status: Type.String({ description: 'firing | resolved' }),
    title: Type.String(),
    service: NStr,
    op: NStr,
    view: NStr,
    series_name: NStr,
    slo_id: NStr,
    regression_id: NStr,
    burn_rate: Type.Union([Type.Number(), Type.Null()]),
    window: NStr,
    started_at: Type.String(),
    resolved_at: NStr,
    dedup_key: Type.String(),
    url: Type.String(),
    notified: Type.Boolean({ description: 'firing was sent to webhooks (false while silenced)' }),
    silenced_by: NStr,
    acknowledged: Type.Union([
      Type.Object({ at: Type.String(), by: NStr, comment: NStr }),
      Type.Null(),
    ]),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: true },
);

const EventSchema = Type.Object({
  at: Type.String(),
  kind: Type.String(),
  actor: NStr,
  detail: Type.Record(Type.String(), Type.Unknown()),
});

export function alertJson(a: AlertRow, baseUrl: string) {
  return {
    id: a.id,
    type: a.type,
    severity: a.severity,
    status: a.status,
    title: a.title,
    service: a.service,
    op: a.op,
    view: a.view,
    series_name: a.series_name,
    slo_id: a.slo_id,
    regression_id: a.regression_id,
    burn_rate: a.burn_rate,
    window: a.burn_window,
    started_at: a.started_at.toISOString(),
    resolved_at: a.resolved_at ? a.resolved_at.toISOString() : null,
    dedup_key: a.dedup_key,
    url: alertUrl(a, baseUrl),
    notified: a.notified,
    silenced_by: a.silenced_by,
    acknowledged: a.acknowledged_at
      ? { at: a.acknowledged_at.toISOString(), by: a.acknowledged_by, comment: a.ack_comment }
      : null,
    details: a.details,
  };
}

const ListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('firing'), Type.Literal('resolved')])),
  type: Type.Optional(Type.Union([Type.Literal('slo_burn'), Type.Literal('regression')])),
  severity: Type.Optional(Type.Union([Type.Literal('page'), Type.Literal('ticket')])),
  service: Type.Optional(Type.String({ maxLength: 256 })),
  slo_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
  regression_id: Type.Optional(Type.String({ maxLength: 64 })),
  since: Type.Optional(
    Type.String({ description: 'RFC 3339 or now-7d; alerts started or resolved since' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});

const SilenceInput = Type.Object(
  {
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    slo_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
    op: Type.Optional(OpSchema),
    starts_at: Type.Optional(Type.String({ description: 'RFC 3339; default now' })),
    ends_at: Type.Optional(Type.String({ description: 'RFC 3339 (or give duration)' })),
    duration: Type.Optional(Type.String({ description: 'e.g. 2h, instead of ends_at' })),
    comment: Type.String({ minLength: 1, maxLength: 2000 }),
    created_by: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const SilenceSchema = Type.Object({
  id: Type.String(),
  service: NStr,
  slo_id: NStr,
  op: NStr,
  starts_at: Type.String(),
  ends_at: Type.String(),
  comment: Type.String(),
  created_by: NStr,
  created_at: Type.String(),
  active: Type.Boolean(),
});

interface SilenceRow {
  id: string;
  service: string | null;
  slo_id: string | null;
  op: string | null;
  starts_at: Date;
  ends_at: Date;
  comment: string;
  created_by: string | null;
  created_at: Date;
}
const SILENCE_COLS = `id::text, service, slo_id::text, op, starts_at, ends_at, comment, created_by, created_at`;

function silenceJson(s: SilenceRow, now = Date.now()) {
  return {
    ...s,
    starts_at: s.starts_at.toISOString(),
    ends_at: s.ends_at.toISOString(),
    created_at: s.created_at.toISOString(),
    active: s.starts_at.getTime() <= now && now < s.ends_at.getTime(),
  };
}

export async function alertRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, guard, config } = ctx;

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/api/v1/alerts',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['alerts'],
        summary: 'Alert history, newest first',
        querystring: ListQuery,
        response: { 200: Type.Object({ alerts: Type.Array(AlertSchema) }) },
      },
    },
    async (req) => {
      const q = req.query;
      const rows = await listAlerts(pool, {
        ...q,
        since: q.since ? new Date(parseTime(q.since, Date.now(), 'since')) : undefined,
        limit: q.limit ?? 200,
      });
      const base = baseUrlOf(config, req);
      return { alerts: rows.map((a) => alertJson(a, base)) };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/alerts/:id',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['alerts'],
        summary: 'One alert with its history (firing, silenced, notified, acknowledged, resolved)',
        params: IdParams,
        response: {
          200: Type.Intersect([AlertSchema, Type.Object({ events: Type.Array(EventSchema) })]),
        },
      },
    },
    async (req) => {
      const alert = await getAlert(pool, req.params.id);
      if (!alert) throw notFound(`alert ${req.params.id} does not exist`);
      const events = await alertEvents(pool, req.params.id);
      return {
        ...alertJson(alert, baseUrlOf(config, req)),
        events: events.map((e) => ({ ...e, at: e.at.toISOString() })),
      };
    },
  );

  const AckBody = Type.Object(
    {
      by: Type.Optional(Type.String({ maxLength: 200 })),
      comment: Type.Optional(Type.String({ maxLength: 2000 })),
    },
    { additionalProperties: false },
  );
  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof AckBody> }>(
    '/api/v1/alerts/:id/ack',
    {
      preHandler: guard('admin'),
      schema: {
        tags: ['alerts'],
        summary: 'Acknowledge an alert',
        params: IdParams,
        body: AckBody,
        response: { 200: AlertSchema },
      },
    },
    async (req) => {
      const a = await acknowledgeAlert(
        pool,
        req.params.id,
        req.body?.by ?? null,
        req.body?.comment ?? null,
      );
      if (!a) throw notFound(`alert ${req.params.id} does not exist`);
      return alertJson(a, baseUrlOf(config, req));
    },
  );

  app.post<{ Body: Static<typeof SilenceInput> }>(
    '/api/v1/silences',
    {
      preHandler: guard('admin'),
      schema: {
        tags: ['alerts'],
        summary:
          'Silence alerts by service, SLO and/or op until an end time (all given matchers must match)',
        body: SilenceInput,
        response: { 201: SilenceSchema },
      },
    },
    async (req, reply) => {
      const b = req.body;
      if (!b.service && !b.slo_id && !b.op)
        throw badRequest('a silence needs at least one of service, slo_id, op');
      const now = Date.now();
      const starts = b.starts_at ? parseTime(b.starts_at, now, 'starts_at') : now;
      let ends: number;
      if (b.ends_at) ends = parseTime(b.ends_at, now, 'ends_at');
      else if (b.duration) {
        try {
          ends = starts + parseDuration(b.duration);
        } catch (e) {
          throw badRequest(`duration: ${(e as Error).message}`);
        }
      } else throw badRequest('ends_at (or duration) is required');
      if (ends <= starts) throw badRequest('ends_at must be after starts_at');
      if (b.slo_id) {
        const s = await pool.query(`SELECT 1 FROM slos WHERE id = $1`, [b.slo_id]);
        if (!s.rowCount) throw badRequest(`SLO ${b.slo_id} does not exist`);
      }
      const { rows } = await pool.query<SilenceRow>(
        `INSERT INTO silences (service, slo_id, op, starts_at, ends_at, comment, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${SILENCE_COLS}`,
        [
          b.service ?? null,
          b.slo_id ?? null,
          b.op ?? null,
          new Date(starts),
          new Date(ends),
          b.comment,
          b.created_by ?? null,
        ],
      );
      return reply.status(201).send(silenceJson(rows[0]!, now));
    },
  );

  const SilenceQuery = Type.Object({ active: Type.Optional(Type.Boolean()) });
  app.get<{ Querystring: Static<typeof SilenceQuery> }>(
    '/api/v1/silences',
    {
      preHandler: guard('read'),
      schema: {
        tags: ['alerts'],
        summary: 'Silences, newest first',
        querystring: SilenceQuery,
        response: { 200: Type.Object({ silences: Type.Array(SilenceSchema) }) },
      },
    },
    async (req) => {
      const { rows } = await pool.query<SilenceRow>(
        `SELECT ${SILENCE_COLS} FROM silences ${req.query.active ? 'WHERE starts_at <= now() AND ends_at > now()' : ''} ORDER BY id DESC LIMIT 1000`,
      );
      return { silences: rows.map((s) => silenceJson(s)) };
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/api/v1/silences/:id',
    {
      preHandler: guard('admin'),
      schema: {
        tags: ['alerts'],
        summary: 'End a silence now (kept in history)',
        params: IdParams,
        response: { 200: SilenceSchema },
      },
    },
    async (req) => {
      const { rows } = await pool.query<SilenceRow>(
        `UPDATE silences SET ends_at = GREATEST(starts_at + interval '1 millisecond', LEAST(ends_at, now()))
          WHERE id = $1 RETURNING ${SILENCE_COLS}`,
        [req.params.id],
      );
      if (!rows[0]) throw notFound(`silence ${req.params.id} does not exist`);
      return silenceJson(rows[0]);
    },
  );
}
