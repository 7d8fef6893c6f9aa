import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations, parseDuration } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import type { AlertNotification } from '@onset/contract';
import { withTransaction, type Queryable } from '../db/pool.ts';
import { HttpError } from '../http/errors.ts';
import {
  acknowledgeAlert,
  recordSilenceEnded,
  resolveAlert,
  silenceFiringAlerts,
} from './state.ts';
import { alertEvents, getAlert, listAlerts, type AlertRow } from './store.ts';
import { notificationsFor, pagingOf } from './notifications.ts';
import { alertTimeline, regressionTimeline } from './timeline.ts';
import {
  getRegression,
  markAcknowledged as markRegressionAcknowledged,
  markResolved as markRegressionResolved,
} from '../regressions/store.ts';
import { alertBody, snapshotOf } from './snapshot.ts';
import { baseUrlOf } from '../config.ts';
import {
  SILENCE_COLUMNS,
  silenceJson,
  silenceRef,
  silencesByIds,
  type SilenceRow,
} from './silences.ts';

function alertJson(
  a: AlertRow,
  baseUrl: string,
  notifications: AlertNotification[] = [],
  silence: SilenceRow | null = null,
) {
  const { details, ...fields } = alertBody(snapshotOf(a), baseUrl);
  return {
    ...fields,
    type: a.type, // a stored alert is never a test
    status: a.status,
    dedup_key: a.dedup_key,
    notified: a.notified,
    silenced_by: a.silenced_by,
    silence: silence ? silenceRef(silence) : null,
    acknowledged: a.acknowledged_at
      ? { at: a.acknowledged_at.toISOString(), by: a.acknowledged_by, comment: a.ack_comment }
      : null,
    notifications,
    paging: pagingOf(a, notifications),
    details,
  };
}

/** Alerts as the API shows them, each with its notifications and silence (one query each for all). */
export async function alertsJson(db: Queryable, rows: AlertRow[], baseUrl: string) {
  const [notes, silences] = await Promise.all([
    notificationsFor(
      db,
      rows.map((a) => a.id),
    ),
    silencesByIds(
      db,
      rows.map((a) => a.silenced_by),
    ),
  ]);
  return rows.map((a) =>
    alertJson(
      a,
      baseUrl,
      notes.get(a.id) ?? [],
      a.silenced_by ? (silences.get(a.silenced_by) ?? null) : null,
    ),
  );
}

export async function alertRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, config } = ctx;
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
        // A regression's alert and the regression are acknowledged together, from either page.
        if (a?.regression_id && a.status === 'firing') {
          const r = await getRegression(c, a.regression_id, true);
          if (r?.status === 'open') await markRegressionAcknowledged(c, r.id, by);
        }
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
        if (cur.regression_id) {
          const r = await getRegression(c, cur.regression_id, true);
          if (r && r.status !== 'resolved')
            await markRegressionResolved(
              c,
              r.id,
              by ?? 'user',
              comment ?? 'resolved from its alert',
            );
        }
        return done ?? cur;
      });
      return (await alertsJson(pool, [a], baseUrlOf(config, req)))[0]!;
    },
  );

  api.get(
    '/regressions/:id/timeline',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['alerts'],
        summary:
          "A regression's lifecycle: detected, alerted, notified (to whom, result), acknowledged, resolved",
        ...operations['GET /api/v1/regressions/:id/timeline'],
      },
    },
    async (req) => {
      const id = req.params.id;
      const r = /^\d{1,18}$/.test(id) ? await getRegression(pool, id) : null;
      if (!r) throw notFound(`regression ${id} does not exist`);
      const rows = (await listAlerts(pool, { regression_id: r.id, limit: 50 })).reverse();
      const notes = await notificationsFor(
        pool,
        rows.map((a) => a.id),
      );
      const withEvents = await Promise.all(
        rows.map(async (alert) => ({
          alert,
          events: await alertEvents(pool, alert.id),
          notifications: notes.get(alert.id) ?? [],
        })),
      );
      return {
        timeline: regressionTimeline(r, withEvents),
        alerts: await alertsJson(pool, rows, baseUrlOf(config, req)),
      };
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
        const { rows } = await c.query<SilenceRow>(
          `INSERT INTO silences (service, slo_id, op, starts_at, ends_at, comment, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${SILENCE_COLUMNS}`,
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
        await silenceFiringAlerts(c, rows[0]!, now);
        return rows[0]!;
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
      const { rows } = await pool.query<SilenceRow>(
        `SELECT ${SILENCE_COLUMNS} FROM silences ${req.query.active ? 'WHERE starts_at <= now() AND ends_at > now()' : ''} ORDER BY id DESC LIMIT 1000`,
      );
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
      const { rows } = await pool.query<SilenceRow>(
        `UPDATE silences SET ends_at = GREATEST(starts_at + interval '1 millisecond', LEAST(ends_at, now()))
          WHERE id = $1 RETURNING ${SILENCE_COLUMNS}`,
        [req.params.id],
      );
      if (!rows[0]) throw notFound(`silence ${req.params.id} does not exist`);
      await recordSilenceEnded(pool, rows[0].id);
      return silenceJson(rows[0]);
    },
  );
}
