/**
 * The words the API, the database, the server and the UI share. Each list is
 * the one place its values are written; the types are derived from it.
 */

/**
 * What a series measures (api.md "How a span becomes an observation"). `host`: a host's own
 * resources as its agent reports them (stolen CPU, …), context for other series, never a regression.
 */
export const OPS = ['request', 'spawn', 'fsync', 'unmount', 'other', 'host'] as const;
export type Op = (typeof OPS)[number];

/** Which side of a call a series measures; `gap` is client minus server time on one edge. */
export const VIEWS = ['server', 'client', 'internal', 'gap'] as const;
export type View = (typeof VIEWS)[number];

/** What a deploy marker says changed. */
export const DEPLOY_KINDS = ['code', 'dependency', 'kernel', 'config', 'infra'] as const;
export type DeployKind = (typeof DEPLOY_KINDS)[number];

/** Where a deploy marker came from: posted to the API or inferred from telemetry. */
export const DEPLOY_SOURCES = ['api', 'inferred'] as const;
export type DeploySource = (typeof DEPLOY_SOURCES)[number];

/** A regression's lifecycle. */
export const REGRESSION_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export type RegressionStatus = (typeof REGRESSION_STATUSES)[number];
/** What kind of change a regression is (docs/detection.md "Shapes"). */
export const REGRESSION_SHAPES = ['step', 'transient', 'drift', 'floor'] as const;
export type RegressionShape = (typeof REGRESSION_SHAPES)[number];

/** The quantile a regression moved most. */
export const REGRESSION_METRICS = ['p50', 'p99'] as const;
export type RegressionMetric = (typeof REGRESSION_METRICS)[number];

/** How loud an alert is: `page` wakes someone, `ticket` waits for working hours. */
export const SEVERITIES = ['page', 'ticket'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** What raised an alert. */
export const ALERT_TYPES = ['slo_burn', 'regression', 'deploy_verdict'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** An alert episode is firing until it resolves. */
export const ALERT_STATUSES = ['firing', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** Payload formats a webhook can speak. */
export const WEBHOOK_FORMATS = [
  'json',
  'slack',
  'pagerduty',
  'alertmanager',
  'alertmanager-webhook',
] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** What a webhook delivery announces (`test` from the "send test" button). */
export const DELIVERY_EVENTS = ['firing', 'resolved', 'test'] as const;
export type DeliveryEvent = (typeof DELIVERY_EVENTS)[number];

/** A webhook delivery's lifecycle in the outbox. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'expired'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Whether an alert's firing reached a receiver (api.md "Delivery truth"). */
export const PAGING_STATES = ['paged', 'failing', 'pending', 'silenced', 'no_webhook'] as const;
export type PagingState = (typeof PAGING_STATES)[number];

/** Steps of a lifecycle timeline, in the order they usually happen. */
export const TIMELINE_KINDS = [
  'detected',
  'reopened',
  'alerted',
  'silenced',
  'notified',
  'notify_failing',
  'notify_pending',
  'acknowledged',
  'silence_ended',
  'resolved',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** Narrow a string to one of a vocabulary's values. */
export function isOneOf<const T extends readonly string[]>(
  values: T,
  text: unknown,
): text is T[number] {
  return typeof text === 'string' && (values as readonly string[]).includes(text);
}

/** Known mechanisms an evidence hint can name (api.md "Evidence"). */
export const HINT_IDS = [
  'tcp-delayed-ack',
  'tcp-min-rto',
  'tcp-syn-retry',
  'dns-timeout',
  'spawn-fd-count',
  'fork-parent-rss',
  'unmount-dirty-bytes',
  'fsync-per-operation',
] as const;
export type HintId = (typeof HINT_IDS)[number];

/**
 * What a series counts its calls from (api.md "Series"): `spans` its own spans (OTLP metrics of
 * the same calls are not added), `metrics` OTLP histogram metrics (no spans), `paired_spans`
 * calls paired from client and server spans (an edge's views).
 */
export const SERIES_CALLS_FROM = ['spans', 'metrics', 'paired_spans'] as const;
export type SeriesCallsFrom = (typeof SERIES_CALLS_FROM)[number];

/** A deploy verdict (api.md "Deploy verdicts"): `pending` until its judged window is over. */
export const VERDICT_OUTCOMES = ['pending', 'pass', 'fail', 'inconclusive'] as const;
export type VerdictOutcome = (typeof VERDICT_OUTCOMES)[number];

/**
 * How a verdict compares (docs/verdicts.md): `canary` the marker's hosts against the service's
 * other hosts over the same minutes; `before_after` the same series after the marker against before it.
 */
export const VERDICT_METHODS = ['canary', 'before_after'] as const;
export type VerdictMethod = (typeof VERDICT_METHODS)[number];

/**
 * Why a series is judged (attribution's rule): `service` the deployed service's own series,
 * `host` a series fed by the marker's hosts, `caller` a caller's client or gap view of an edge
 * to the deployed service.
 */
export const VERDICT_ROLES = ['service', 'host', 'caller'] as const;
export type VerdictRole = (typeof VERDICT_ROLES)[number];
