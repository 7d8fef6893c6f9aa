import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { REGRESSION_STATUSES as STATUSES, type RegressionStatus } from '@onset/contract';
import type { AppContext } from '../app.ts';
import { withTransaction } from '../db/pool.ts';
import { HttpError, badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { acknowledgeRegressionAlert, resolveRegressionAlert } from './alerting.ts';
import { runDetect, settledArrivalMs } from './pass.ts';
import {
  REGRESSION_COLUMNS,
  getRegression,
  listRegressions,
  regressionJson,
  type RegressionRow,
} from './store.ts';

const NStr = Type.Union([Type.String(), Type.Null()]);
const Err = Type.Object({ error: Type.String(), message: Type.String() });
const errors = { 400: Err, 401: Err, 403: Err, 404: Err, 409: Err };

const LevelSchema = Type.Object({
  p50_ms: Type.Number(),
  p99_ms: Type.Number(),
  count: Type.Number({ description: 'events in the window (after: since the onset)' }),
});

const SuspectSchema = Type.Object({
  deploy_id: Type.String(),
  kind: Type.String(),
  service: NStr,
  component: NStr,
  from_version: NStr,
  to_version: NStr,
  hosts: Type.Array(Type.String()),
  at: Type.String(),
  source: Type.String({ description: 'api | inferred' }),
  commit: NStr,
  url: NStr,
  description: NStr,
  score: Type.Number({ description: '0..1, best first' }),
  reason: Type.String(),
});

const CohortSchema = Type.Union([
  Type.Object({
    attribute: Type.String({
      description: 'e.g. os.version, dependency.hyper, onset.cohort.spawn_method, or host.name',
    }),
    slow: Type.Array(Type.String()),
    fast: Type.Array(Type.String()),
    slow_hosts: Type.Array(Type.String()),
    fast_hosts: Type.Array(Type.String()),
  }),
  Type.Null(),
]);

const RegressionSchema = Type.Object({
  id: Type.String(),
  series_id: Type.String(),
  service: Type.String(),
  op: Type.String(),
  view: Type.String(),
  name: Type.String(),
  peer: NStr,
  host: Type.Union([Type.String(), Type.Null()], {
    description: 'set only when the step is confined to one host of several',
  }),
  onset: Type.String(),
  onset_uncertainty_ms: Type.Number(),
  detected_at: Type.String(),
  updated_at: Type.String(),
  metric: Type.String({ description: 'the quantile that moved most: p50 | p99' }),
  confidence: Type.Number(),
  before: LevelSchema,
  after: LevelSchema,
  ratio_p50: Type.Number(),
  ratio_p99: Type.Number(),
  suspects: Type.Array(SuspectSchema),
  cohort: CohortSchema,
  status: Type.String({ description: 'open | acknowledged | resolved' }),
  acknowledged_at: NStr,
  acknowledged_by: NStr,
  resolved_at: NStr,
  resolved_by: NStr,
  resolution: NStr,
});

const ListQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
  op: Type.Optional(Type.String({ maxLength: 32 })),
  view: Type.Optional(Type.String({ maxLength: 32 })),
  name: Type.Optional(Type.String({ maxLength: 1024 })),
  peer: Type.Optional(Type.String({ maxLength: 256 })),
  series_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
  status: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'open, acknowledged, resolved, active (= open,acknowledged) or all; comma-separated. Default all.',
    }),
  ),
  since: Type.Optional(
    Type.String({ maxLength: 64, description: 'onset at or after: RFC 3339, epoch ms, or now-6h' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});

const IdParams = Type.Object({ id: Type.String({ maxLength: 40 }) });
const ActionBody = Type.Union([
  Type.Object({
    by: Type.Optional(Type.String({ maxLength: 200 })),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  }),
  Type.Null(),
]);
const DetectBody = Type.Union([
  Type.Object({
    upto: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'examine minutes before this time only (backfills replaying history in order); default: a minute ago',
      }),
    ),
  }),
  Type.Null(),
]);

const PassSchema = Type.Object({
  skipped: Type.Optional(Type.Boolean()),
  through: Type.String({ description: 'minutes before this instant were examined' }),
  duration_ms: Type.Number(),
  series: Type.Object({
    total: Type.Number(),
    new: Type.Number(),
    fed: Type.Number(),
    points: Type.Number(),
  }),
  screened: Type.Number(),
  regressions: Type.Object({
    opened: Type.Number(),
    resolved: Type.Number(),
    updated: Type.Number(),
  }),
});

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

/** Regressions (api.md "Regressions"): the list, one item, ack/resolve/reopen, and POST /api/v1/detect. */
export async function regressionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, guard, registry, partitions } = ctx;
  const tags = ['regressions'];

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/api/v1/regressions',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary: 'Regressions, newest onset first',
        description:
          'Step changes found by detection, with before/after levels, ranked suspect deploys and the cohort split.',
        querystring: ListQuery,
        response: { 200: Type.Object({ regressions: Type.Array(RegressionSchema) }), ...errors },
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
        limit: q.limit ?? 200,
      });
      return { regressions: rows.map(regressionJson) };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/regressions/:id',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary: 'One regression',
        params: IdParams,
        response: { 200: RegressionSchema, ...errors },
      },
    },
    async (req) => {
      const r = await getRegression(pool, parseId(req.params.id));
      if (!r) throw notFound(`regression ${req.params.id} does not exist`);
      return regressionJson(r);
    },
  );

  const action = (
    path: string,
    summary: string,
    apply: (
      c: import('../db/pool.ts').PoolClient,
      r: RegressionRow,
      body: { by?: string; comment?: string },
    ) => Promise<RegressionRow>,
  ) =>
    app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof ActionBody> }>(
      `/api/v1/regressions/:id/${path}`,
      {
        preHandler: guard('admin'),
        schema: {
          tags,
          summary,
          params: IdParams,
          body: ActionBody,
          response: { 200: RegressionSchema, ...errors },
        },
      },
      async (req) => {
        const id = parseId(req.params.id);
        const body = req.body ?? {};
        return withTransaction(pool, async (c) => {
          const r = await getRegression(c, id, true);
          if (!r) throw notFound(`regression ${id} does not exist`);
          return regressionJson(await apply(c, r, body));
        });
      },
    );

  action('ack', 'Acknowledge a regression (and its alert)', async (c, r, body) => {
    if (r.status === 'resolved')
      throw new HttpError(409, 'conflict', `regression ${r.id} is resolved; reopen it first`);
    const { rows } = await c.query<RegressionRow>(
      `UPDATE regressions SET status = 'acknowledged', acknowledged_at = coalesce(acknowledged_at, now()),
              acknowledged_by = coalesce($2, acknowledged_by), updated_at = now()
        WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
      [r.id, body.by ?? null],
    );
    await acknowledgeRegressionAlert(c, r.id, body.by ?? null, body.comment ?? null);
    return rows[0]!;
  });

  action(
    'resolve',
    'Mark a regression resolved (fixed, or not worth tracking); resolves its alert',
    async (c, r, body) => {
      if (r.status === 'resolved') return r;
      const { rows } = await c.query<RegressionRow>(
        `UPDATE regressions SET status = 'resolved', resolved_at = now(), resolved_by = $2, resolution = $3, updated_at = now()
        WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
        [r.id, body.by ?? 'user', body.comment ?? 'marked resolved'],
      );
      await resolveRegressionAlert(c, r.id, { reason: 'regression marked resolved' });
      return rows[0]!;
    },
  );

  action('reopen', 'Reopen a resolved or acknowledged regression', async (c, r) => {
    const { rows } = await c.query<RegressionRow>(
      `UPDATE regressions SET status = 'open', resolved_at = NULL, resolved_by = NULL, resolution = NULL,
              acknowledged_at = NULL, acknowledged_by = NULL, updated_at = now()
        WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
      [r.id],
    );
    return rows[0]!;
  });

  app.post<{ Body: Static<typeof DetectBody> }>(
    '/api/v1/detect',
    {
      preHandler: guard('admin'),
      schema: {
        tags,
        summary: 'Run edge pairing, marker inference and a detection pass over all data now',
        description:
          'Answers when the pass is done (it waits for a pass already running). Minutes up to a minute ago are examined; ' +
          'with `upto`, only minutes before that time (for backfills that replay history in order).',
        body: DetectBody,
        response: {
          200: Type.Object({
            pairing: Type.Object({ pairs: Type.Number(), edges: Type.Number() }),
            inference: Type.Object({
              resources: Type.Number(),
              changes: Type.Number(),
              created: Type.Number(),
              extended: Type.Number(),
            }),
            detection: PassSchema,
          }),
          ...errors,
        },
      },
    },
    async (req) => {
      const now = Date.now();
      const upto = req.body?.upto;
      const uptoMs = upto !== undefined ? parseTime(upto, now, 'upto') : undefined;
      if (uptoMs !== undefined && uptoMs > now) throw badRequest('upto must not be in the future');
      const pairUptoMs = await settledArrivalMs(pool);
      return runDetect({ pool, registry, partitions }, { uptoMs, pairUptoMs, wait: true });
    },
  );

  app.get(
    '/api/v1/detect',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary: 'The last detection pass',
        response: {
          200: Type.Object({
            passes: Type.Number(),
            last: Type.Union([
              Type.Intersect([PassSchema, Type.Object({ started_at: Type.String() })]),
              Type.Null(),
            ]),
          }),
        },
      },
    },
    async () => {
      const { rows } = await pool.query<{
        passes: number;
        started_at: Date | null;
        result: Static<typeof PassSchema> | null;
      }>(`SELECT passes, started_at, result FROM regress_pass`);
      const r = rows[0];
      return {
        passes: Number(r?.passes ?? 0),
        last:
          r?.result && r.started_at
            ? { ...r.result, started_at: r.started_at.toISOString() }
            : null,
      };
    },
  );
}
