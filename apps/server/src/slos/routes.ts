import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { parseDuration, sloAlertKey } from '@onset/contract';
import type { AppContext } from '../app.ts';
import { HttpError, badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import {
  SloInputSchema,
  selectorOfSeries,
  specFromJson,
  type SloInput,
  type SloSpec,
} from './spec.ts';
import { parseOpenSlo, toOpenSlo } from './openslo.ts';
import {
  createSlo,
  deleteSlo,
  getSlo,
  listSlos,
  notFoundSlo,
  sloJson,
  updateSlo,
  type SloRow,
} from './store.ts';
import { runSloPass, sloStatuses } from './evaluate.ts';
import { seriesLabels, slosWatching, suggestForSeries, unwatchedSeries } from './suggest.ts';
import { resolveAlert } from '../alerts/state.ts';
import { runDeliveryPass } from '../webhooks/deliver.ts';
import { deliverySettings } from '../webhooks/settings.ts';
import { baseUrlOf } from '../webhooks/routes.ts';

const YAML_TYPES = [
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'application/openslo+yaml',
];
const IdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$' }) });
const NStr = Type.Union([Type.String(), Type.Null()]);
const NNum = Type.Union([Type.Number(), Type.Null()]);
const WINDOW_KEYS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'];

const TierSchema = Type.Object({
  name: Type.String(),
  severity: Type.String(),
  long: Type.String(),
  short: Type.String(),
  enabled: Type.Boolean(),
  factor: Type.Number(),
  burn_long: NNum,
  burn_short: NNum,
  events_long: Type.Number(),
  events_short: Type.Number(),
  firing: Type.Boolean(),
});

const StatusSchema = Type.Object({
  evaluated_at: Type.String(),
  window_start: Type.String(),
  window_end: Type.String(),
  sli: NNum,
  good: Type.Number(),
  total: Type.Number(),
  budget_remaining: Type.Number({ description: '1 = untouched, 0 = spent, negative = SLO broken' }),
  burn_rates: Type.Object(Object.fromEntries(WINDOW_KEYS.map((k) => [k, NNum]))),
  events: Type.Object(Object.fromEntries(WINDOW_KEYS.map((k) => [k, Type.Number()]))),
  tiers: Type.Array(TierSchema),
  alert: Type.Union([
    Type.Object({
      id: Type.String(),
      severity: Type.String(),
      since: Type.String(),
      acknowledged: Type.Boolean(),
    }),
    Type.Null(),
  ]),
  exact_since: NStr,
});

const SloSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: NStr,
  service: Type.String(),
  op: NStr,
  view: NStr,
  name_match: NStr,
  peer: NStr,
  series_id: NStr,
  threshold_ms: Type.Number(),
  objective: Type.Number(),
  window: Type.String(),
  calendar: Type.Boolean(),
  time_zone: Type.String(),
  alert_tiers: Type.Record(Type.String(), Type.Boolean()),
  min_events: Type.Integer(),
  min_bad_events: Type.Integer(),
  labels: Type.Record(Type.String(), Type.String()),
  source: Type.String(),
  exact_since: NStr,
  created_at: Type.String(),
  updated_at: Type.String(),
  status: StatusSchema,
});

const SpecBody = {
  content: {
    'application/json': { schema: SloInputSchema },
    ...Object.fromEntries(
      YAML_TYPES.map((t) => [
        t,
        {
          schema: Type.String({
            description: 'OpenSLO v1 YAML (kind: SLO, threshold latency SLI)',
          }),
        },
      ]),
    ),
  },
};

const MultiSchema = Type.Union([SloSchema, Type.Object({ slos: Type.Array(SloSchema) })]);

const SuggestQuery = Type.Object({
  objective: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
  lookback: Type.Optional(Type.String({ description: 'history to learn from; default 7d' })),
});

export async function sloRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, guard, config } = ctx;
  const tags = ['slos'];
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );

  const withStatus = async (rows: SloRow[], now = Date.now()) => {
    const statuses = await sloStatuses(pool, rows, now);
    return rows.map((r) => ({ ...sloJson(r), status: statuses.get(r.id)! }));
  };

  /** Fill the selector of a series-bound spec (OpenSLO metricSource.spec.series_id) from the series. */
  const bindSeries = async (spec: SloSpec): Promise<SloSpec> => {
    if (!spec.series_id) return spec;
    const s = await seriesLabels(pool, spec.series_id);
    if (!s) throw badRequest(`series ${spec.series_id} does not exist`);
    return { ...spec, ...selectorOfSeries(s) };
  };

  const specsOf = async (req: FastifyRequest): Promise<SloSpec[]> => {
    if (typeof req.body === 'string') return Promise.all(parseOpenSlo(req.body).map(bindSeries));
    const input = req.body as SloInput;
    if (!input || typeof input !== 'object')
      throw badRequest('body must be an SLO (JSON) or an OpenSLO YAML document');
    if (!input.series_id) return [specFromJson(input)];
    const series = await seriesLabels(pool, input.series_id);
    if (!series) throw badRequest(`series ${input.series_id} does not exist`);
    let suggested: number | null = null;
    if (input.threshold_ms === undefined) {
      const now = Date.now();
      suggested =
        (
          await suggestForSeries(
            pool,
            series.id,
            input.objective ?? 0.99,
            now - 7 * 86_400_000,
            now,
          )
        )?.threshold_ms ?? null;
    }
    return [specFromJson(input, series, suggested)];
  };

  app.post(
    '/api/v1/slos',
    {
      preHandler: guard('admin'),
      schema: {
        tags,
        summary:
          'Create an SLO from JSON, from a series (series_id; threshold suggested), or from OpenSLO v1 YAML',
        body: SpecBody,
        response: { 201: MultiSchema },
      },
    },
    async (req, reply) => {
      const specs = await specsOf(req);
      const rows: SloRow[] = [];
      for (const s of specs) rows.push(await createSlo(pool, s));
      const out = await withStatus(rows);
      return reply.status(201).send(out.length === 1 ? out[0] : { slos: out });
    },
  );

  const ListQuery = Type.Object({ service: Type.Optional(Type.String({ maxLength: 256 })) });
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/api/v1/slos',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary: 'SLOs with their current status',
        querystring: ListQuery,
        response: { 200: Type.Object({ slos: Type.Array(SloSchema) }) },
      },
    },
    async (req) => ({
      slos: await withStatus(await listSlos(pool, { service: req.query.service })),
    }),
  );

  const UnwatchedQuery = Type.Object({
    service: Type.Optional(Type.String({ maxLength: 256 })),
    op: Type.Optional(Type.String({ maxLength: 32 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
  });
  app.get<{ Querystring: Static<typeof UnwatchedQuery> }>(
    '/api/v1/slos/unwatched',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary:
          'Latency series no SLO watches (each can get one with POST /api/v1/slos {"series_id"})',
        querystring: UnwatchedQuery,
        response: {
          200: Type.Object({
            series: Type.Array(
              Type.Object({
                id: Type.String(),
                service: Type.String(),
                op: Type.String(),
                view: Type.String(),
                name: Type.String(),
                peer: NStr,
              }),
            ),
          }),
        },
      },
    },
    async (req) => ({
      series: await unwatchedSeries(pool, {
        service: req.query.service,
        op: req.query.op,
        limit: req.query.limit ?? 1000,
      }),
    }),
  );

  app.post(
    '/api/v1/slos/evaluate',
    {
      preHandler: guard('admin'),
      schema: {
        tags,
        summary:
          'Run the SLO pass (count, evaluate, alert) and webhook delivery now, and answer when done',
      },
    },
    async (req) => {
      const pass = await runSloPass(pool);
      const delivery = await runDeliveryPass(pool, {
        ...deliverySettings(),
        baseUrl: baseUrlOf(config, req),
      });
      return { pass, delivery };
    },
  );

  const GetQuery = Type.Object({
    at: Type.Optional(
      Type.String({ description: 'evaluate as of this time (RFC 3339 or now-1h); default now' }),
    ),
  });
  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof GetQuery> }>(
    '/api/v1/slos/:id',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary: 'One SLO: spec and status (SLI, budget remaining, burn rates, current alert)',
        params: IdParams,
        querystring: GetQuery,
        response: { 200: SloSchema },
      },
    },
    async (req) => {
      const row = await getSlo(pool, req.params.id);
      if (!row) throw notFoundSlo(req.params.id);
      const now = req.query.at ? parseTime(req.query.at, Date.now(), 'at') : Date.now();
      return (await withStatus([row], now))[0];
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/slos/:id/openslo',
    {
      preHandler: guard('read'),
      schema: { tags, summary: 'The SLO as an OpenSLO v1 YAML document', params: IdParams },
    },
    async (req, reply) => {
      const row = await getSlo(pool, req.params.id);
      if (!row) throw notFoundSlo(req.params.id);
      return reply.type('application/yaml').send(toOpenSlo(sloJson(row)));
    },
  );

  app.put<{ Params: Static<typeof IdParams> }>(
    '/api/v1/slos/:id',
    {
      preHandler: guard('admin'),
      schema: {
        tags,
        summary:
          'Replace an SLO spec (JSON or OpenSLO YAML); counters are recounted if the selector or threshold changed',
        params: IdParams,
        body: SpecBody,
        response: { 200: SloSchema },
      },
    },
    async (req) => {
      const specs = await specsOf(req);
      if (specs.length !== 1) throw badRequest('PUT takes exactly one SLO (one objective)');
      const row = await updateSlo(pool, req.params.id, specs[0]!);
      if (!row) throw notFoundSlo(req.params.id);
      return (await withStatus([row]))[0];
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/api/v1/slos/:id',
    {
      preHandler: guard('admin'),
      schema: { tags, summary: 'Delete an SLO; its firing alerts resolve', params: IdParams },
    },
    async (req, reply) => {
      const row = await getSlo(pool, req.params.id);
      if (!row) throw notFoundSlo(req.params.id);
      for (const sev of ['page', 'ticket'] as const)
        await resolveAlert(pool, sloAlertKey(row.id, sev), Date.now(), { reason: 'SLO deleted' });
      await deleteSlo(pool, row.id);
      return reply.status(204).send();
    },
  );

  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof SuggestQuery> }>(
    '/api/v1/series/:id/slo-suggestion',
    {
      preHandler: guard('read'),
      schema: {
        tags,
        summary:
          'A default SLO for a series, threshold suggested from its history; POST it to /api/v1/slos as is',
        params: IdParams,
        querystring: SuggestQuery,
        response: {
          200: Type.Object({
            slo: Type.Object({
              name: Type.String(),
              series_id: Type.String(),
              service: Type.String(),
              threshold_ms: Type.Number(),
              objective: Type.Number(),
              window: Type.String(),
            }),
            basis: Type.Object({
              from: Type.String(),
              to: Type.String(),
              events: Type.Number(),
              quantile_ms: Type.Number({
                description: 'the latency `objective` of the history stayed under',
              }),
              expected_sli: Type.Number({
                description:
                  'share of the history at or under the threshold (estimated from histograms)',
              }),
            }),
            watched_by: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
          }),
        },
      },
    },
    async (req) => {
      const s = await seriesLabels(pool, req.params.id);
      if (!s) throw notFound(`series ${req.params.id} does not exist`);
      const objective = req.query.objective ?? 0.99;
      let lookback: number;
      try {
        lookback = parseDuration(req.query.lookback ?? '7d');
      } catch (e) {
        throw badRequest(`lookback: ${(e as Error).message}`);
      }
      const to = Date.now();
      const from = to - lookback;
      const sug = await suggestForSeries(pool, s.id, objective, from, to);
      if (!sug)
        throw new HttpError(
          422,
          'no_history',
          `series ${s.id} has no observations in the last ${req.query.lookback ?? '7d'} to suggest a threshold from`,
        );
      return {
        slo: {
          name: `${s.service} ${s.op} ${s.name}`.slice(0, 200),
          series_id: s.id,
          service: s.service,
          threshold_ms: sug.threshold_ms,
          objective,
          window: '28d',
        },
        basis: {
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          events: sug.events,
          quantile_ms: sug.quantile_ms,
          expected_sli: sug.expected_sli,
        },
        watched_by: await slosWatching(pool, s.id),
      };
    },
  );
}
