import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations, parseDuration } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { withTransaction } from '../db/pool.ts';
import { HttpError } from '../http/errors.ts';
import {
  acknowledgeAlert,
  recordSilenceEnded,
  resolveAlert,
  silenceFiringAlerts,
} from './state.ts';
import { alertEvents, getAlert, listAlerts } from './store.ts';
import { notificationsFor } from './notifications.ts';
import { alertTimeline } from './timeline.ts';
import { alertJson, alertsJson } from './json.ts';
import type { AlertKinds } from './kinds.ts';
import { baseUrlOf } from '../config.ts';
import { endSilence, insertSilence, listSilences, silenceJson, silencesByIds } from './silences.ts';

/** The alert routes, given each kind's acknowledge/resolve hooks by app.ts (kinds.ts). */
export async function alertRoutes(
  app: FastifyInstance,
  opts: AppContext & { alertKinds: AlertKinds },
): Promise<void> {
  const { pool, config, alertKinds: kinds } = opts;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/alerts',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['alerts'],
        summary: 'Alert history, newest first',
        ...operations['GET /api/v1/alerts'],
      },
    },
    async (req) => {
      const q = req.query;
      const rows = await listAlerts(pool, {
        ...q,
        since: q.since ? new Date(parseTime(q.since, Date.now(), 'since')) : undefined,
        limit: q.limit ?? 200,
      });
      return { alerts: await alertsJson(pool, rows, baseUrlOf(config, req)) };
    },
  );

  api.get(
    '/alerts/:id',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['alerts'],
        summary: 'One alert with its history (firing, silenced, notified, acknowledged, resolved)',
        ...operations['GET /api/v1/alerts/:id'],
      },
    },
    async (req) => {
      const alert = await getAlert(pool, req.params.id);
      if (!alert) throw notFound(`alert ${req.params.id} does not exist`);
      const [events, notes, silences] = await Promise.all([
        alertEvents(pool, alert.id),
        notificationsFor(pool, [alert.id]),
        silencesByIds(pool, [alert.silenced_by]),
      ]);
      const notifications = notes.get(alert.id) ?? [];
      const silence = alert.silenced_by ? (silences.get(alert.silenced_by) ?? null) : null;
      return {
        ...alertJson(alert, baseUrlOf(config, req), notifications, silence),
        events: events.map((e) => ({ ...e, at: e.at.toISOString() })),
        timeline: alertTimeline(alert, events, notifications),
      };
    },
  );

  api.post(
    '/alerts/:id/ack',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['alerts'],
        summary: 'Acknowledge an alert',
        ...operations['POST /api/v1/alerts/:id/ack'],
      },
    },
    async (req) => {
      const by = req.body?.by || null;
      const comment = req.body?.comment || null;
      const a = await withTransaction(pool, async (c) => {
        const a = await acknowledgeAlert(c, req.params.id, by, comment);
        // What it is about is acknowledged with it (a regression, from either page): its owner's hook.
        if (a?.status === 'firing') await kinds[a.type]?.acknowledged?.(c, a, by);
        return a;
      });
      if (!a) throw notFound(`alert ${req.params.id} does not exist`);
      return (await alertsJson(pool, [a], baseUrlOf(config, req)))[0]!;
    },
  );

  api.post(
    '/alerts/:id/resolve',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['alerts'],
        summary:
          'Resolve a firing alert by hand (a regression alert resolves its regression; an SLO that still burns fires again)',
        ...operations['POST /api/v1/alerts/:id/resolve'],
      },
    },
    async (req) => {
      const by = req.body?.by || null;
      const comment = req.body?.comment || null;
      const a = await withTransaction(pool, async (c) => {
        const cur = await getAlert(c, req.params.id);
        if (!cur) throw notFound(`alert ${req.params.id} does not exist`);
        if (cur.status !== 'firing')
          throw new HttpError(409, 'conflict', `alert ${cur.id} is already resolved`);
        const done = await resolveAlert(
          c,
          cur.alert_key,
          Date.now(),
          { reason: 'resolved by hand', ...(comment ? { comment } : {}) },
          by,
        );
        await kinds[cur.type]?.resolvedByHand?.(c, cur, by, comment);
        return done ?? cur;
      });
      return (await alertsJson(pool, [a], baseUrlOf(config, req)))[0]!;
    },
  );

  api.post(
    '/silences',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['alerts'],
        summary:
          'Silence alerts by service, SLO and/or op until an end time (all given matchers must match)',
        ...operations['POST /api/v1/silences'],
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
      // The silence and its effect on what fires now commit together.
      const silence = await withTransaction(pool, async (c) => {
        const silence = await insertSilence(c, {
          service: b.service ?? null,
          slo_id: b.slo_id ?? null,
          op: b.op ?? null,
          starts_at: new Date(starts),
          ends_at: new Date(ends),
          comment: b.comment,
          created_by: b.created_by ?? null,
        });
        await silenceFiringAlerts(c, silence, now);
        return silence;
      });
      return reply.status(201).send(silenceJson(silence, now));
    },
  );

  api.get(
    '/silences',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['alerts'],
        summary: 'Silences, newest first',
        ...operations['GET /api/v1/silences'],
      },
    },
    async (req) => {
      const rows = await listSilences(pool, !!req.query.active);
      return { silences: rows.map((s) => silenceJson(s)) };
    },
  );

  api.delete(
    '/silences/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['alerts'],
        summary: 'End a silence now (kept in history)',
        ...operations['DELETE /api/v1/silences/:id'],
      },
    },
    async (req) => {
      const ended = await endSilence(pool, req.params.id);
      if (!ended) throw notFound(`silence ${req.params.id} does not exist`);
      await recordSilenceEnded(pool, ended.id);
      return silenceJson(ended);
    },
  );
}
