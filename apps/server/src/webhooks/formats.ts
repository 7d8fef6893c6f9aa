/**
 * Webhook bodies per format (api.md "Alert webhooks"). Pure: the same stored
 * delivery renders the same bytes on every retry.
 */
import type { KnownBlock, MrkdwnElement } from '@slack/types';
import { createHash, createHmac } from 'node:crypto';
import type { AlertStatus, DeliveryEvent, WebhookAuth, WebhookFormat } from '@onset/contract';
import { alertBody, alertUrl, type AlertSnapshot } from '../alerts/snapshot.ts';
import { alertText } from '../alerts/text.ts';
import { authHeaders } from './auth.ts';

export interface WebhookTarget {
  id: string;
  name: string | null;
  url: string;
  format: WebhookFormat;
  secret: string | null;
  routing_key: string | null;
  /** Credentials the receiver needs (auth.ts); absent or null: none. */
  auth?: WebhookAuth | null;
}

export interface DeliveryToRender {
  id: string;
  event: DeliveryEvent;
  dedup_key: string;
  payload: AlertSnapshot;
}

export interface Rendered {
  body: string;
  headers: Record<string, string>;
  /** Where to POST: the webhook's URL, except for formats that name an API path under it. */
  url: string;
}

/** Alertmanager's API for clients that push alerts (what Prometheus uses). */
const ALERTMANAGER_ALERTS_PATH = '/api/v2/alerts';

/** The webhook URL of an `alertmanager` target is Alertmanager's base URL (or already its alerts API). */
function alertmanagerAlertsUrl(url: string): string {
  return alertmanagerApiUrl(url, ALERTMANAGER_ALERTS_PATH);
}

/** Another path of Alertmanager's API (e.g. `/api/v2/silences`) from an `alertmanager` target's URL. */
export function alertmanagerApiUrl(url: string, path: string): string {
  const u = new URL(url);
  const base = u.pathname.replace(/\/+$/, '');
  u.pathname = (
    base.endsWith(ALERTMANAGER_ALERTS_PATH) ? base.slice(0, -ALERTMANAGER_ALERTS_PATH.length) : base
  ).concat(path);
  return u.toString();
}

/**
 * Slack's control characters in text it parses (mrkdwn, and the top-level
 * `text`): `<!channel>`, `<@U…>` and `<url|label>` are markup, so a service
 * named `<!channel>` would ping everyone. Slack's rule: escape &, <, > only.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `sha256=<hex HMAC-SHA256 of the body with the secret>` (X-Onset-Signature). */
function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

const status = (d: DeliveryToRender): AlertStatus =>
  d.event === 'resolved' ? 'resolved' : 'firing';

function num(x: unknown): string {
  return typeof x === 'number' ? String(Number(x.toPrecision(4))) : String(x ?? '–');
}

/** One human line per alert, shared by Slack and PagerDuty: the alert text's title (alerts/text.ts). */
function summary(a: AlertSnapshot, st: AlertStatus, test: boolean): string {
  const head = test ? '[TEST] ' : '';
  return `${head}${st === 'resolved' ? '[RESOLVED] ' : `[${a.severity.toUpperCase()}] `}${alertText(a).title}`.slice(
    0,
    1024,
  );
}

/** The text's lines and cause as one paragraph (Alertmanager's description). */
function description(a: AlertSnapshot): string {
  const t = alertText(a);
  return [...t.lines.map((l) => l.text), ...(t.cause ? [`cause: ${t.cause}`] : [])].join('\n');
}

function renderJson(d: DeliveryToRender, baseUrl: string): unknown {
  const a = d.payload;
  return {
    version: 1,
    status: status(d),
    dedup_key: d.dedup_key,
    ...(d.event === 'test' ? { test: true } : {}),
    alert: alertBody(a, baseUrl),
  };
}

/**
 * An incoming-webhook message: fallback text plus Block Kit blocks, typed by
 * Slack's own SDK types (@slack/types), so the compiler checks the shape.
 */
export interface SlackMessage {
  text: string;
  blocks: KnownBlock[];
}

/** Block Kit's limit on a section field's text; longer and Slack refuses the whole message. */
const SLACK_FIELD_MAX = 2000;

/** A mrkdwn field, clipped to Slack's limit without cutting an entity (&amp;) in half. */
const md = (text: string): MrkdwnElement => ({
  type: 'mrkdwn',
  text:
    text.length <= SLACK_FIELD_MAX
      ? text
      : `${text.slice(0, SLACK_FIELD_MAX - 1).replace(/&[a-z]{0,3}$/, '')}…`,
});

function renderSlack(d: DeliveryToRender, baseUrl: string): SlackMessage {
  const a = d.payload;
  const st = status(d);
  const url = alertUrl(a, baseUrl);
  const icon =
    st === 'resolved'
      ? ':white_check_mark:'
      : a.severity === 'page'
        ? ':rotating_light:'
        : ':warning:';
  const e = slackEscape;
  const t = alertText(a);
  const fields: MrkdwnElement[] = [
    md(`*Status*\n${st}`),
    md(`*Severity*\n${a.severity}`),
    ...(a.service ? [md(`*Service*\n${e(a.service)}`)] : []),
    // The text's lines carry the burn of a kind that renders one; the raw number only otherwise.
    ...(a.burn_rate !== null && !t.lines.length
      ? [md(`*Burn rate*\n${num(a.burn_rate)}× over ${e(a.window ?? '?')}`)]
      : []),
    // Block Kit takes 10 fields a section: 5 are status, severity, service, cause, started/resolved.
    ...t.lines.slice(0, 4).map((l) => md(`*${e(l.label)}*\n${e(l.text)}`)),
    ...(t.cause ? [md(`*Cause*\n${e(t.cause)}`)] : []),
    md(`*Started*\n${a.started_at}`),
    ...(a.resolved_at ? [md(`*Resolved*\n${a.resolved_at}`)] : []),
  ];
  return {
    text: `${icon} ${e(summary(a, st, d.event === 'test'))}`,
    blocks: [
      {
        type: 'header',
        text: {
          type: 'plain_text',
          text: `${st === 'resolved' ? 'Resolved' : a.severity === 'page' ? 'Page' : 'Ticket'}: ${t.title}`.slice(
            0,
            150,
          ),
          emoji: true,
        },
      },
      { type: 'section', fields },
      {
        type: 'actions',
        elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open in Onset' }, url }],
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `${e(a.type)} · dedup_key \`${e(d.dedup_key)}\`${d.event === 'test' ? ' · test event' : ''}`,
          },
        ],
      },
    ],
  };
}

function renderPagerDuty(d: DeliveryToRender, target: WebhookTarget, baseUrl: string): unknown {
  const a = d.payload;
  const st = status(d);
  if (st === 'resolved')
    return { routing_key: target.routing_key, event_action: 'resolve', dedup_key: d.dedup_key };
  const url = alertUrl(a, baseUrl);
  return {
    routing_key: target.routing_key,
    event_action: 'trigger',
    dedup_key: d.dedup_key,
    payload: {
      summary: summary(a, st, d.event === 'test'),
      source: a.service ?? 'onset',
      severity: a.severity === 'page' ? 'critical' : 'warning',
      timestamp: a.started_at,
      component: a.series_name ?? a.op ?? undefined,
      group: a.service ?? undefined,
      class: a.type,
      custom_details: {
        ...a.details,
        text: alertText(a).lines.map((l) => l.text),
        cause: alertText(a).cause,
        burn_rate: a.burn_rate,
        window: a.window,
        slo_id: a.slo_id,
        regression_id: a.regression_id,
      },
    },
    client: 'Onset',
    client_url: url,
    links: [{ href: url, text: 'Open in Onset' }],
  };
}

/** Alertmanager's alertname: OnsetSLOBurn, OnsetRegression, OnsetTest; a new kind reads Onset<KindInPascalCase>. */
export function alertnameOf(type: AlertSnapshot['type']): string {
  if (type === 'slo_burn') return 'OnsetSLOBurn';
  return `Onset${type.replace(/(^|_)([a-z])/g, (_, _s, c: string) => c.toUpperCase())}`;
}

/** Labels and annotations of an alert, shared by both Alertmanager formats. */
function alertmanagerAlert(d: DeliveryToRender): {
  alertname: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const a = d.payload;
  const alertname = alertnameOf(a.type);
  const labels: Record<string, string> = {
    alertname,
    severity: a.severity,
    dedup_key: d.dedup_key,
  };
  if (a.service) labels.service = a.service;
  if (a.op) labels.op = a.op;
  if (a.slo_id) labels.slo_id = a.slo_id;
  if (a.regression_id) labels.regression_id = a.regression_id;
  if (typeof a.details.slo_name === 'string') labels.slo = a.details.slo_name;
  if (a.type === 'deploy_verdict' && typeof a.details.deploy_id === 'string')
    labels.deploy_id = a.details.deploy_id;
  const annotations: Record<string, string> = { summary: alertText(a).title };
  const more = description(a);
  if (more) annotations.description = more;
  if (a.burn_rate !== null) annotations.burn_rate = num(a.burn_rate);
  if (a.window) annotations.window = a.window;
  return { alertname, labels, annotations };
}

/**
 * `alertmanager`: PostableAlerts for Alertmanager's own API (POST /api/v2/alerts),
 * as Prometheus sends them. While firing there is no endsAt: Alertmanager
 * then keeps the alert for its resolve_timeout (5 min by default), and Onset
 * re-sends it every minute while it fires (alertmanagerRefresh). Resolved
 * carries endsAt = the time it resolved.
 */
function renderAlertmanager(d: DeliveryToRender, baseUrl: string): unknown {
  const a = d.payload;
  const { labels, annotations } = alertmanagerAlert(d);
  const resolvedAt = status(d) === 'resolved' ? (a.resolved_at ?? a.started_at) : null;
  return [
    {
      labels,
      annotations,
      startsAt: a.started_at,
      ...(resolvedAt ? { endsAt: resolvedAt } : {}),
      generatorURL: alertUrl(a, baseUrl),
    },
  ];
}

/** `alertmanager-webhook`: the body Alertmanager itself sends to its webhook receivers (for tools that take that). */
function renderAlertmanagerWebhook(
  d: DeliveryToRender,
  target: WebhookTarget,
  baseUrl: string,
): unknown {
  const a = d.payload;
  const st = status(d);
  const { alertname, labels, annotations } = alertmanagerAlert(d);
  return {
    version: '4',
    groupKey: `{}:{alertname="${alertname}", dedup_key="${d.dedup_key}"}`,
    truncatedAlerts: 0,
    status: st,
    receiver: target.name ?? `onset-webhook-${target.id}`,
    groupLabels: { alertname, dedup_key: d.dedup_key },
    commonLabels: labels,
    commonAnnotations: annotations,
    externalURL: baseUrl,
    alerts: [
      {
        status: st,
        labels,
        annotations,
        startsAt: a.started_at,
        endsAt: a.resolved_at ?? '0001-01-01T00:00:00Z',
        generatorURL: alertUrl(a, baseUrl),
        fingerprint: createHash('sha256').update(d.dedup_key).digest('hex').slice(0, 16),
      },
    ],
  };
}

export function render(target: WebhookTarget, d: DeliveryToRender, baseUrl: string): Rendered {
  const body = JSON.stringify(
    target.format === 'slack'
      ? renderSlack(d, baseUrl)
      : target.format === 'pagerduty'
        ? renderPagerDuty(d, target, baseUrl)
        : target.format === 'alertmanager'
          ? renderAlertmanager(d, baseUrl)
          : target.format === 'alertmanager-webhook'
            ? renderAlertmanagerWebhook(d, target, baseUrl)
            : renderJson(d, baseUrl),
  );
  const headers: Record<string, string> = {
    ...authHeaders(target.auth ?? null),
    'content-type': 'application/json',
    'user-agent': 'Onset-Webhook/1',
    'x-onset-delivery': d.id,
    'x-onset-event': d.event,
    'x-onset-dedup-key': d.dedup_key,
  };
  if (target.secret) headers['x-onset-signature'] = signature(target.secret, body);
  const url = target.format === 'alertmanager' ? alertmanagerAlertsUrl(target.url) : target.url;
  return { body, headers, url };
}
