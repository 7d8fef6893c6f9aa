import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  operations,
  parseDuration,
  SLO_YAML_TYPES,
  sloAlertKey,
  type SloInput,
} from '@onset/contract';
import type { AppContext } from '../context.ts';
import { HttpError, badRequest, notFound } from '../http/errors.ts';
import { parseTime } from '../http/time.ts';
import { selectorOfSeries, specFromJson, type SloSpec } from './spec.ts';
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
import { seriesLabels, slosWatching, suggestFromBaseline, unwatchedSeries } from './suggest.ts';
import { resolveAlert } from '../alerts/state.ts';
import { runDeliveryPass } from '../webhooks/deliver.ts';
import { deliverySettings } from '../webhooks/settings.ts';
import { baseUrlOf } from '../config.ts';

export async function sloRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, config } = ctx;
  const tags = ['slos'];
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addContentTypeParser([...SLO_YAML_TYPES], { parseAs: 'string' }, (_req, body, done) =>
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
      suggested =
        (
          await suggestFromBaseline(
            pool,
            series.id,
            input.objective ?? 0.99,
            7 * 86_400_000,
            Date.now(),
          )
        )?.suggestion.threshold_ms ?? null;
    }
    return [specFromJson(input, series, suggested)];
  };

  api.post(
    '/slos',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary:
          'Create an SLO from JSON, from a series (series_id; threshold suggested), or from OpenSLO v1 YAML',
        ...operations['POST /api/v1/slos'],
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

  api.get(
    '/slos',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'SLOs with their current status',
        ...operations['GET /api/v1/slos'],
      },
    },
    async (req) => ({
      slos: await withStatus(await listSlos(pool, { service: req.query.service })),
    }),
  );

  api.get(
    '/slos/unwatched',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary:
          'Latency series no SLO watches (each can get one with POST /api/v1/slos {"series_id"})',
        ...operations['GET /api/v1/slos/unwatched'],
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

  api.post(
    '/slos/evaluate',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary:
          'Run the SLO pass (count, evaluate, alert) and webhook delivery now, and answer when done',
        ...operations['POST /api/v1/slos/evaluate'],
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

  api.get(
    '/slos/:id',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'One SLO: spec and status (SLI, budget remaining, burn rates, current alert)',
        ...operations['GET /api/v1/slos/:id'],
      },
    },
    async (req) => {
      const row = await getSlo(pool, req.params.id);
      if (!row) throw notFoundSlo(req.params.id);
      const now = req.query.at ? parseTime(req.query.at, Date.now(), 'at') : Date.now();
      return (await withStatus([row], now))[0];
    },
  );

  api.get(
    '/slos/:id/openslo',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'The SLO as an OpenSLO v1 YAML document',
        ...operations['GET /api/v1/slos/:id/openslo'],
      },
    },
    async (req, reply) => {
      const row = await getSlo(pool, req.params.id);
      if (!row) throw notFoundSlo(req.params.id);
      return reply.type('application/yaml').send(toOpenSlo(sloJson(row)));
    },
  );

  api.put(
    '/slos/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary:
          'Replace an SLO spec (JSON or OpenSLO YAML); counters are recounted if the selector or threshold changed',
        ...operations['PUT /api/v1/slos/:id'],
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

  api.delete(
    '/slos/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Delete an SLO; its firing alerts resolve',
        ...operations['DELETE /api/v1/slos/:id'],
      },
    },
    async (req, reply) => {
      const row = await getSlo(pool, req.params.id);
      if (!row) throw notFoundSlo(req.params.id);
      for (const sev of ['page', 'ticket'] as const)
        await resolveAlert(pool, sloAlertKey(row.id, sev), Date.now(), { reason: 'SLO deleted' });
      await deleteSlo(pool, row.id);
      return reply.status(204).send(null);
    },
  );

  api.get(
    '/series/:id/slo-suggestion',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary:
          'A default SLO for a series, threshold suggested from its history; POST it to /api/v1/slos as is',
        ...operations['GET /api/v1/series/:id/slo-suggestion'],
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
      // Nothing older than the retention is kept: a longer lookback reads the same history
      // (and an unbounded one made a time PostgreSQL cannot store).
      const base = await suggestFromBaseline(
        pool,
        s.id,
        objective,
        Math.min(lookback, config.histogramRetentionMs),
        Date.now(),
      );
      if (!base)
        throw new HttpError(
          422,
          'no_history',
          `series ${s.id} has no observations in the last ${req.query.lookback ?? '7d'} to suggest a threshold from`,
        );
      const sug = base.suggestion;
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
          from: new Date(base.fromMs).toISOString(),
          to: new Date(base.toMs).toISOString(),
          events: sug.events,
          quantile_ms: sug.quantile_ms,
          expected_sli: sug.expected_sli,
          ...(base.beforeRegression ? { before_regression: base.beforeRegression } : {}),
        },
        watched_by: await slosWatching(pool, s.id),
      };
    },
  );
}
