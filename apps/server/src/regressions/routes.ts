import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  operations,
  REGRESSION_STATUSES as STATUSES,
  type RegressionStatus,
} from '@onset/contract';
import type { AppContext } from '../context.ts';
import { withTransaction, type Queryable } from '../db/pool.ts';
import { HttpError, badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { activeSilences, silenceFor, silenceRef } from '../alerts/silences.ts';
import { alertEvents, listAlerts } from '../alerts/store.ts';
import { notificationsFor } from '../alerts/notifications.ts';
import { regressionTimeline } from '../alerts/timeline.ts';
import { alertsJson } from '../alerts/json.ts';
import { baseUrlOf } from '../config.ts';
import {
  acknowledgeRegressionAlert,
  reopenRegressionAlert,
  resolveRegressionAlert,
} from './alerting.ts';
import {
  getRegression,
  listRegressions,
  markAcknowledged,
  markOpen,
  markResolved,
  regressionJson,
  type RegressionRow,
} from './store.ts';

function parseStatuses(text: string | undefined): RegressionStatus[] | undefined {
  if (text === undefined || text === '') return undefined;
  const out = new Set<RegressionStatus>();
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (part === 'all') return undefined;
    if (part === 'active') {
      out.add('open');
      out.add('acknowledged');
    } else if ((STATUSES as readonly string[]).includes(part)) out.add(part as RegressionStatus);
    else
      throw badRequest(
        `status: "${part}" is not one of ${[...STATUSES, 'active', 'all'].join(', ')}`,
      );
  }
  return [...out];
}

function parseId(id: string): string {
  if (!/^\d{1,18}$/.test(id)) throw notFound(`regression ${id} does not exist`);
  return id;
}

/**
 * Regressions as the API shows them, each with the active silence that holds
 * its alert (a regression's alert has its service and op, and no SLO).
 */
async function shownWithSilences(db: Queryable, rows: RegressionRow[]) {
  const now = Date.now();
  const active = await activeSilences(db, now);
  return rows.map((r) => {
    const s = silenceFor(active, { service: r.service, op: r.op, slo_id: null });
    return { ...regressionJson(r), silence: s ? silenceRef(s, now) : null };
  });
}

/** Regressions (api.md "Regressions"): the list, one item, ack/resolve/reopen, the timeline (POST /api/v1/detect: detection/routes.ts). */
export async function regressionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, config } = ctx;
  const tags = ['regressions'];
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/regressions',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'Regressions, newest onset first',
        description:
          'Step changes found by detection, with before/after levels, ranked suspect deploys and the cohort split.',
        ...operations['GET /api/v1/regressions'],
      },
    },
    async (req) => {
      const q = req.query;
      const rows = await listRegressions(pool, {
        service: q.service,
        op: q.op,
        view: q.view,
        name: q.name,
        peer: q.peer,
        seriesId: q.series_id,
        statuses: parseStatuses(q.status),
        sinceMs: q.since !== undefined ? parseTime(q.since, Date.now(), 'since') : undefined,
        merged: q.merged ?? false,
        limit: q.limit ?? 200,
      });
      return { regressions: await shownWithSilences(pool, rows) };
    },
  );

  api.get(
    '/regressions/:id',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'One regression',
        ...operations['GET /api/v1/regressions/:id'],
      },
    },
    async (req) => {
      const r = await getRegression(pool, parseId(req.params.id));
      if (!r) throw notFound(`regression ${req.params.id} does not exist`);
      return (await shownWithSilences(pool, [r]))[0]!;
    },
  );

  const action = (
    path: 'ack' | 'resolve' | 'reopen',
    summary: string,
    apply: (
      c: import('../db/pool.ts').PoolClient,
      r: RegressionRow,
      body: { by?: string; comment?: string },
    ) => Promise<RegressionRow>,
  ) =>
    api.post(
      `/regressions/:id/${path}`,
      {
        config: { scope: 'admin' },
        schema: {
          tags,
          summary,
          ...operations[`POST /api/v1/regressions/:id/${path}`],
        },
      },
      async (req) => {
        const id = parseId(req.params.id);
        const body = req.body ?? {};
        return withTransaction(pool, async (c) => {
          const r = await getRegression(c, id, true);
          if (!r) throw notFound(`regression ${id} does not exist`);
          return (await shownWithSilences(c, [await apply(c, r, body)]))[0]!;
        });
      },
    );

  action('ack', 'Acknowledge a regression (and its alert)', async (c, r, body) => {
    if (r.status === 'resolved')
      throw new HttpError(409, 'conflict', `regression ${r.id} is resolved; reopen it first`);
    const row = await markAcknowledged(c, r.id, body.by ?? null);
    await acknowledgeRegressionAlert(c, r.id, body.by ?? null, body.comment ?? null);
    return row;
  });

  action(
    'resolve',
    'Mark a regression resolved (fixed, or not worth tracking); resolves its alert',
    async (c, r, body) => {
      if (r.status === 'resolved') return r;
      const row = await markResolved(c, r.id, body.by ?? 'user', body.comment ?? 'marked resolved');
      await resolveRegressionAlert(c, r.id, {
        reason: 'regression marked resolved',
        by: body.by ?? null,
        comment: body.comment ?? null,
      });
      return row;
    },
  );

  action(
    'reopen',
    'Reopen a resolved or acknowledged regression; its alert fires again (pages by the policy of an open)',
    async (c, r, body) => {
      if (r.merged_into)
        throw new HttpError(
          409,
          'conflict',
          `regression ${r.id} was merged into regression ${r.merged_into} (one incident); reopen that one`,
        );
      const row = await markOpen(c, r.id);
      await reopenRegressionAlert(c, regressionJson(row), {
        by: body.by ?? null,
        comment: body.comment ?? null,
      });
      return row;
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
}
