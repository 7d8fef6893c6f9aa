import { SloWatching, SloWatchingQuery } from './slo-membership.ts';
import {
  Evidence,
  SelectionCompare,
  SelectionCompareQuery,
  Trace,
  TraceIdParams,
} from './evidence.ts';
import { EdgeQuery, EdgeResponse } from './series-edge.ts';
import { SegmentsQuery, SegmentsResponse } from './series-segments.ts';
import { Signatures, SignaturesQuery } from './series-signatures.ts';
import {
  RegressionCohortLines,
  RegressionCohortQuery,
  SeriesGroups,
  SeriesGroupsQuery,
} from './series-groups.ts';
import {
  Alert,
  AlertAck,
  AlertBulkAck,
  AlertBulkSilence,
  AlertBulkSilenced,
  AlertIdParams,
  AlertList,
  AlertListQuery,
  AlertResolve,
  AlertWithEvents,
  RegressionTimeline,
  Silence,
  SilenceInput,
  SilenceList,
  SilenceListQuery,
} from './alerts.ts';
import {
  CohortsResponse,
  HeatmapQuery,
  HeatmapResponse,
  QuantilesQuery,
  QuantilesResponse,
  Series,
  SeriesIdParams,
  SeriesList,
  SeriesListQuery,
  SeriesOptions,
  SeriesOptionsQuery,
  SeriesSearchQuery,
  SeriesSearchResult,
  Arriving,
  ArrivingQuery,
  SeriesHosts,
  SeriesHostsQuery,
} from './series.ts';
import {
  Delivery,
  DeliveryList,
  DeliveryListQuery,
  Webhook,
  WebhookIdParams,
  WebhookInput,
  WebhookList,
  WebhookUpdate,
} from './webhooks.ts';
import {
  Deploy,
  DeployIdParams,
  DeployInput,
  DeployList,
  DeployListQuery,
  DeployPatch,
} from './deploys.ts';
import { Verdict, VerdictQuery } from './verdicts.ts';
import { FlaggerWebhook, VerdictGate } from './verdict-gates.ts';
import {
  DetectInput,
  DetectResult,
  DetectStatus,
  Regression,
  RegressionAction,
  RegressionIdParams,
  RegressionList,
  RegressionListQuery,
} from './regressions.ts';
import { Type } from '@sinclair/typebox';
import { ErrorBody, NoContent, withErrors, type ErrorStatus } from './common.ts';
import { HealthStatus } from './health.ts';
import { CardinalityStatus } from './limits.ts';
import { SloHistory, SloHistoryQuery } from './slo-history.ts';
import {
  Slo,
  SloBody,
  SloCreated,
  SloGetQuery,
  SloIdParams,
  SloList,
  SloListQuery,
  SloSuggestion,
  SloSuggestionQuery,
  UnwatchedList,
  UnwatchedQuery,
} from './slos.ts';

/** What POST /api/v1/slos/evaluate answers: the SLO pass and the delivery pass it ran. */
const EvaluateResult = Type.Object({
  pass: Type.Object({}, { additionalProperties: true }),
  delivery: Type.Object({}, { additionalProperties: true }),
});
/** GET /api/v1/slos/{id}/openslo: the SLO as an OpenSLO v1 YAML document. */
const OpenSloYaml = {
  content: { 'application/yaml': { schema: Type.String({ description: 'OpenSLO v1 YAML' }) } },
};

/** The request and success schemas of every operation; `operations` adds the error answers. */
const declared = {
  'GET /api/v1/series': { querystring: SeriesListQuery, response: { 200: SeriesList } },
  'GET /api/v1/series/options': {
    querystring: SeriesOptionsQuery,
    response: { 200: SeriesOptions },
  },
  'GET /api/v1/series/search': {
    querystring: SeriesSearchQuery,
    response: { 200: SeriesSearchResult },
  },
  'GET /api/v1/arriving': {
    querystring: ArrivingQuery,
    response: { 200: Arriving },
  },
  'GET /api/v1/series/:id': { params: SeriesIdParams, response: { 200: Series } },
  'GET /api/v1/series/:id/hosts': {
    params: SeriesIdParams,
    querystring: SeriesHostsQuery,
    response: { 200: SeriesHosts },
  },
  'GET /api/v1/series/:id/quantiles': {
    params: SeriesIdParams,
    querystring: QuantilesQuery,
    response: { 200: QuantilesResponse },
  },
  'GET /api/v1/series/:id/heatmap': {
    params: SeriesIdParams,
    querystring: HeatmapQuery,
    response: { 200: HeatmapResponse },
  },
  'GET /api/v1/series/:id/segments': {
    params: SeriesIdParams,
    querystring: SegmentsQuery,
    response: { 200: SegmentsResponse },
  },
  'GET /api/v1/series/:id/compare': {
    params: SeriesIdParams,
    querystring: SelectionCompareQuery,
    response: { 200: SelectionCompare },
  },
  'GET /api/v1/series/:id/signatures': {
    params: SeriesIdParams,
    querystring: SignaturesQuery,
    response: { 200: Signatures },
  },
  'GET /api/v1/series/:id/cohorts': { params: SeriesIdParams, response: { 200: CohortsResponse } },
  'GET /api/v1/series/:id/groups': {
    params: SeriesIdParams,
    querystring: SeriesGroupsQuery,
    response: { 200: SeriesGroups },
  },
  'POST /api/v1/deploys': { body: DeployInput, response: { 201: Deploy } },
  'GET /api/v1/deploys': {
    querystring: DeployListQuery,
    response: { 200: DeployList },
  },
  'GET /api/v1/deploys/:id': {
    params: DeployIdParams,
    response: { 200: Deploy },
  },
  'GET /api/v1/deploys/:id/verdict': {
    params: DeployIdParams,
    querystring: VerdictQuery,
    response: { 200: Verdict },
  },
  'POST /api/v1/verdicts/flagger': {
    body: FlaggerWebhook,
    response: { 200: VerdictGate, 412: VerdictGate },
  },
  'PATCH /api/v1/deploys/:id': {
    params: DeployIdParams,
    body: DeployPatch,
    response: { 200: Deploy },
  },
  'DELETE /api/v1/deploys/:id': {
    params: DeployIdParams,
    response: { 204: NoContent },
  },
  'GET /api/v1/regressions': {
    querystring: RegressionListQuery,
    response: { 200: RegressionList },
  },
  'GET /api/v1/regressions/:id': {
    params: RegressionIdParams,
    response: { 200: Regression },
  },
  'GET /api/v1/regressions/:id/evidence': {
    params: RegressionIdParams,
    response: { 200: Evidence },
  },
  'GET /api/v1/regressions/:id/cohort': {
    params: RegressionIdParams,
    querystring: RegressionCohortQuery,
    response: { 200: RegressionCohortLines },
  },
  'GET /api/v1/traces/:trace_id': {
    params: TraceIdParams,
    response: { 200: Trace },
  },
  'POST /api/v1/regressions/:id/ack': {
    params: RegressionIdParams,
    body: RegressionAction,
    response: { 200: Regression },
  },
  'POST /api/v1/regressions/:id/resolve': {
    params: RegressionIdParams,
    body: RegressionAction,
    response: { 200: Regression },
  },
  'POST /api/v1/regressions/:id/reopen': {
    params: RegressionIdParams,
    body: RegressionAction,
    response: { 200: Regression },
  },
  'POST /api/v1/detect': { body: DetectInput, response: { 200: DetectResult } },
  'GET /api/v1/detect': { response: { 200: DetectStatus } },
  'POST /api/v1/slos': { body: SloBody, response: { 201: SloCreated } },
  'GET /api/v1/slos': { querystring: SloListQuery, response: { 200: SloList } },
  'GET /api/v1/slos/unwatched': { querystring: UnwatchedQuery, response: { 200: UnwatchedList } },
  'POST /api/v1/slos/evaluate': { response: { 200: EvaluateResult } },
  'GET /api/v1/slos/:id': { params: SloIdParams, querystring: SloGetQuery, response: { 200: Slo } },
  'GET /api/v1/slos/:id/openslo': { params: SloIdParams, response: { 200: OpenSloYaml } },
  'PUT /api/v1/slos/:id': { params: SloIdParams, body: SloBody, response: { 200: Slo } },
  'DELETE /api/v1/slos/:id': { params: SloIdParams, response: { 204: NoContent } },
  'GET /api/v1/series/:id/edge': {
    params: SeriesIdParams,
    querystring: EdgeQuery,
    response: { 200: EdgeResponse },
  },
  'GET /api/v1/slos/watching': { querystring: SloWatchingQuery, response: { 200: SloWatching } },
  'GET /api/v1/slos/:id/history': {
    params: SloIdParams,
    querystring: SloHistoryQuery,
    response: { 200: SloHistory },
  },
  'GET /api/v1/series/:id/slo-suggestion': {
    params: SloIdParams,
    querystring: SloSuggestionQuery,
    response: { 200: SloSuggestion },
  },
  'GET /api/v1/alerts': { querystring: AlertListQuery, response: { 200: AlertList } },
  'POST /api/v1/alerts/ack': { body: AlertBulkAck, response: { 200: AlertList } },
  'POST /api/v1/alerts/silence': { body: AlertBulkSilence, response: { 201: AlertBulkSilenced } },
  'GET /api/v1/alerts/:id': { params: AlertIdParams, response: { 200: AlertWithEvents } },
  'POST /api/v1/alerts/:id/ack': {
    params: AlertIdParams,
    body: AlertAck,
    response: { 200: Alert },
  },
  'POST /api/v1/alerts/:id/resolve': {
    params: AlertIdParams,
    body: AlertResolve,
    response: { 200: Alert },
  },
  'GET /api/v1/regressions/:id/timeline': {
    params: RegressionIdParams,
    response: { 200: RegressionTimeline },
  },
  'POST /api/v1/silences': { body: SilenceInput, response: { 201: Silence } },
  'GET /api/v1/silences': { querystring: SilenceListQuery, response: { 200: SilenceList } },
  'DELETE /api/v1/silences/:id': { params: AlertIdParams, response: { 200: Silence } },
  'POST /api/v1/webhooks': { body: WebhookInput, response: { 201: Webhook } },
  'GET /api/v1/webhooks': { response: { 200: WebhookList } },
  'GET /api/v1/webhooks/:id': { params: WebhookIdParams, response: { 200: Webhook } },
  'PUT /api/v1/webhooks/:id': {
    params: WebhookIdParams,
    body: WebhookUpdate,
    response: { 200: Webhook },
  },
  'DELETE /api/v1/webhooks/:id': { params: WebhookIdParams, response: { 204: NoContent } },
  'POST /api/v1/webhooks/:id/test': { params: WebhookIdParams, response: { 200: Delivery } },
  'GET /api/v1/webhooks/:id/deliveries': {
    params: WebhookIdParams,
    querystring: DeliveryListQuery,
    response: { 200: DeliveryList },
  },
  'GET /api/v1/limits': { response: { 200: CardinalityStatus } },
  'GET /healthz': { response: { 200: HealthStatus } },
  'GET /readyz': { response: { 200: HealthStatus, 503: HealthStatus } },
} as const;

/** Refusals a handler gives beyond the shared ones (common.ts). */
const EXTRA_ERRORS: Partial<Record<keyof typeof declared, readonly ErrorStatus[]>> = {
  // the same external_id with different content
  'POST /api/v1/deploys': [409],
  // acknowledging a resolved regression; resolving a resolved alert
  'POST /api/v1/regressions/:id/ack': [409],
  'POST /api/v1/alerts/:id/resolve': [409],
  // an id of the list names no alert (nothing is changed)
  'POST /api/v1/alerts/ack': [404],
  'POST /api/v1/alerts/silence': [404],
  // `shards: 'owned'` on a server that leases no detection shards (its scheduler is off)
  'POST /api/v1/detect': [409],
  // no marker matches the webhook's deploy_id or service
  'POST /api/v1/verdicts/flagger': [404],
  // the series has no history to suggest a threshold from
  'GET /api/v1/series/:id/slo-suggestion': [422],
};
/** Open routes (probes): no token, no input, answered as declared. */
const OPEN = ['GET /healthz', 'GET /readyz'] as const;

type WithErrors<T> = {
  [K in keyof T]: K extends (typeof OPEN)[number]
    ? T[K]
    : T[K] & {
        response: (T[K] extends { response: infer R } ? R : unknown) &
          Record<ErrorStatus, typeof ErrorBody>;
      };
};

/**
 * Every operation of the public API with the schemas of its request and
 * responses, keyed "METHOD /path" (Fastify's `:param` syntax), every error
 * answer it can give included. The server's routes spread these into their
 * route schemas, so /docs/json is generated from exactly these schemas (a
 * test holds them equal, and schemathesis holds the server to them).
 */
export const operations = Object.fromEntries(
  Object.entries(declared).map(([key, op]) => {
    const method = key.split(' ')[0]!;
    if ((OPEN as readonly string[]).includes(key)) return [key, op];
    return [key, withErrors(method, op, EXTRA_ERRORS[key as keyof typeof declared])];
  }),
) as unknown as WithErrors<typeof declared>;

export type OperationKey = keyof typeof operations;
