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
import { alertEvents, getAlert, listAlerts, type AlertRow } from './store.ts';
import type { Queryable } from '../db/pool.ts';
import { notificationsFor } from './notifications.ts';
import { alertTimeline } from './timeline.ts';
import { alertJson, alertsJson } from './json.ts';
import type { AlertKinds } from './kinds.ts';
import { baseUrlOf } from '../config.ts';
import {
  endSilence,
  insertSilence,
  listSilences,
  silenceJson,
  silencesByIds,
  type SilenceRow,
} from './silences.ts';

const textOf = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** A silence's end from `ends_at` or `duration` after `starts` (400 if neither, or not after it). */
function silenceEnd(
  b: { ends_at?: string; duration?: string },
  starts: number,
  now: number,
): number {
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
  return ends;
}

/** Insert a silence and mark what it matches that fires now, in the caller's transaction. */
async function makeSilence(
  c: Queryable,
  s: Omit<SilenceRow, 'id' | 'created_at'>,
  now: number,
): Promise<SilenceRow> {
  const silence = await insertSilence(c, s);
  await silenceFiringAlerts(c, silence, now);
  return silence;
}

/** What silencing an alert matches: its SLO, else its service and op (as the alert page does). */
function matcherOf(a: AlertRow): Pick<SilenceRow, 'service' | 'slo_id' | 'op'> | null {
  if (a.slo_id) return { service: null, slo_id: a.slo_id, op: null };
  if (!a.service && !a.op) return null;
  return { service: a.service ?? null, slo_id: null, op: a.op ?? null };
}

/** The alerts `ids` name, in their order; 404 naming the first that does not exist. */
async function alertsByIds(c: Queryable, ids: string[]): Promise<AlertRow[]> {
  const out: AlertRow[] = [];
  for (const id of ids) {
    const a = await getAlert(c, id);
    if (!a) throw notFound(`alert ${id} does not exist`);
    out.push(a);
  }
  return out;
}

/**
 * The alert routes, given each kind's acknowledge/resolve hooks by app.ts (kinds.ts),
 * and what to tell once a silence was made or ended (Alertmanager targets mirror them).
 */
export async function alertRoutes(
  app: FastifyInstance,
  opts: AppContext & { alertKinds: AlertKinds; onSilencesChanged?: () => void },
): Promise<void> {
  const { pool, config, alertKinds: kinds } = opts;
  const silencesChanged = () => opts.onSilencesChanged?.();
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

  api.post(
    '/alerts/ack',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['alerts'],
        summary: 'Acknowledge several alerts at once (all or none)',
        ...operations['POST /api/v1/alerts/ack'],
      },
    },
    async (req) => {
      const by = req.body.by || null;
      const comment = req.body.comment || null;
      const done = await withTransaction(pool, async (c) => {
        const out: AlertRow[] = [];
        for (const cur of await alertsByIds(c, req.body.ids)) {
          const a = (await acknowledgeAlert(c, cur.id, by, comment))!;
          if (a.status === 'firing') await kinds[a.type]?.acknowledged?.(c, a, by);
          out.push(a);
        }
        return out;
      });
      return { alerts: await alertsJson(pool, done, baseUrlOf(config, req)) };
    },
  );

  api.post(
    '/alerts/silence',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['alerts'],
        summary:
          'Silence what each of several alerts is about (its SLO, else its service and op): one silence per distinct matcher, all or none',
        ...operations['POST /api/v1/alerts/silence'],
      },
    },
    async (req, reply) => {
      const b = req.body;
      const now = Date.now();
      const ends = silenceEnd(b, now, now);
      const { silences, ids } = await withTransaction(pool, async (c) => {
        const alerts = await alertsByIds(c, b.ids);
        const matchers = new Map<string, Pick<SilenceRow, 'service' | 'slo_id' | 'op'>>();
        for (const a of alerts) {
          const m = matcherOf(a);
          if (!m) throw badRequest(`alert ${a.id} names no SLO, service or op to silence by`);
          matchers.set(JSON.stringify([m.slo_id, m.service, m.op]), m);
        }
        const silences: SilenceRow[] = [];
        for (const m of matchers.values())
          silences.push(
            await makeSilence(
              c,
              {
                ...m,
                starts_at: new Date(now),
                ends_at: new Date(ends),
                comment: b.comment,
                created_by: b.created_by ?? null,
              },
              now,
            ),
          );
        return { silences, ids: alerts.map((a) => a.id) };
      });
      silencesChanged();
      const rows = await alertsByIds(pool, ids);
      return reply.status(201).send({
        silences: silences.map((s) => silenceJson(s, now)),
        alerts: await alertsJson(pool, rows, baseUrlOf(config, req)),
      });
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
      const reopen = events.findLast((e) => e.kind === 'reopened');
      const reopened = reopen
        ? { at: reopen.at, by: reopen.actor, comment: textOf(reopen.detail?.comment) }
        : null;
      return {
        ...alertJson(alert, baseUrlOf(config, req), notifications, silence, reopened),
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
      const ends = silenceEnd(b, starts, now);
      if (b.slo_id) {
        const s = await pool.query(`SELECT 1 FROM slos WHERE id = $1`, [b.slo_id]);
        if (!s.rowCount) throw badRequest(`SLO ${b.slo_id} does not exist`);
      }
      // The silence and its effect on what fires now commit together.
      const silence = await withTransaction(pool, (c) =>
        makeSilence(
          c,
          {
            service: b.service ?? null,
            slo_id: b.slo_id ?? null,
            op: b.op ?? null,
            starts_at: new Date(starts),
            ends_at: new Date(ends),
            comment: b.comment,
            created_by: b.created_by ?? null,
          },
          now,
        ),
      );
      silencesChanged();
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
      silencesChanged();
      return silenceJson(ended);
    },
  );
}
