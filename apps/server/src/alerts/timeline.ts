/**
 * One lifecycle per alert and per regression: detected → alerted → notified
 * (to whom, with what result) → acknowledged (by whom, why) → resolved,
 * computed from what was recorded (alert_events, the outbox, the regression
 * row) so every reader shows the same story.
 */
import type { AlertNotification, TimelineEntry } from '@onset/contract';
import type { AlertEvent, AlertRow } from './store.ts';
import type { FirstFailure } from './notifications.ts';

type Kind = TimelineEntry['kind'];

function entry(kind: Kind, at: string, more: Partial<TimelineEntry> = {}): TimelineEntry {
  return {
    kind,
    at,
    actor: null,
    comment: null,
    alert_id: null,
    webhook_id: null,
    webhook_name: null,
    status_code: null,
    error: null,
    detail: {},
    ...more,
  };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/**
 * What each webhook made of the alert: failing (since its first failed
 * attempt, with the error), then delivered, or still waiting.
 */
function notificationEntries(
  alertId: string,
  sentAt: string,
  notifications: Array<AlertNotification & { first_failure?: FirstFailure | null }>,
): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  for (const n of notifications) {
    const who = {
      alert_id: alertId,
      webhook_id: n.webhook_id,
      webhook_name: n.webhook_name,
      detail: { event: n.event, format: n.format, attempts: n.attempts, state: n.state },
    };
    const f = n.first_failure;
    if (f)
      out.push(
        entry('notify_failing', f.at, {
          ...who,
          status_code: n.state === 'delivered' ? f.status_code : n.last_status_code,
          error: n.state === 'delivered' ? f.error : n.last_error,
        }),
      );
    if (n.state === 'delivered')
      out.push(
        entry('notified', n.delivered_at ?? sentAt, { ...who, status_code: n.last_status_code }),
      );
    else if (!f) out.push(entry('notify_pending', sentAt, who));
  }
  return out;
}

/** The alert's own steps, oldest first. */
export function alertTimeline(
  alert: AlertRow,
  events: AlertEvent[],
  notifications: Array<AlertNotification & { first_failure?: FirstFailure | null }>,
): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const base = { alert_id: alert.id };
  let sentAt = alert.started_at.toISOString();
  for (const e of events) {
    const at = e.at.toISOString();
    const d = e.detail ?? {};
    switch (e.kind) {
      case 'firing':
        out.push(
          entry('alerted', at, {
            ...base,
            detail: {
              severity: alert.severity,
              burn_rate: d.burn_rate ?? null,
              window: d.window ?? null,
            },
          }),
        );
        break;
      case 'notified':
        sentAt = at; // queued for the webhooks: their results follow
        break;
      case 'reopened':
        out.push(entry('reopened', at, { ...base, actor: e.actor, comment: text(d.comment) }));
        break;
      case 'silenced':
        out.push(
          entry('silenced', at, {
            ...base,
            actor: e.actor,
            comment: text(d.comment),
            detail: { silence_id: d.silence_id ?? null, ends_at: d.ends_at ?? null },
          }),
        );
        break;
      case 'silence_ended':
        out.push(entry('silence_ended', at, { ...base, actor: e.actor, detail: d }));
        break;
      case 'acknowledged':
        out.push(entry('acknowledged', at, { ...base, actor: e.actor, comment: text(d.comment) }));
        break;
      case 'resolved':
        out.push(
          entry('resolved', at, {
            ...base,
            actor: e.actor,
            comment: text(d.comment),
            detail: { reason: d.reason ?? null },
          }),
        );
        break;
    }
  }
  out.push(...notificationEntries(alert.id, sentAt, notifications));
  return sortTimeline(out);
}

const ORDER = new Map<string, number>(
  [
    'detected',
    'reopened',
    'alerted',
    'silenced',
    'notify_pending',
    'notify_failing',
    'notified',
    'acknowledged',
    'silence_ended',
    'resolved',
  ].map((k, i) => [k, i]),
);

/** By time; at the same instant, in lifecycle order. */
export function sortTimeline(entries: TimelineEntry[]): TimelineEntry[] {
  return entries
    .map((e, i) => ({ e, i }))
    .sort(
      (a, b) =>
        Date.parse(a.e.at) - Date.parse(b.e.at) ||
        (ORDER.get(a.e.kind) ?? 0) - (ORDER.get(b.e.kind) ?? 0) ||
        a.i - b.i,
    )
    .map((x) => x.e);
}

export interface RegressionLifecycle {
  id: string;
  onset: Date;
  detected_at: Date;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution: string | null;
}

/**
 * A regression's lifecycle: its detection, then each of its alerts' steps;
 * its own acknowledgement and resolution when no alert recorded them (a
 * regression acknowledged before it alerted, or one that never alerted).
 */
export function regressionTimeline(
  r: RegressionLifecycle,
  alerts: Array<{ alert: AlertRow; events: AlertEvent[]; notifications: AlertNotification[] }>,
): TimelineEntry[] {
  const out: TimelineEntry[] = [
    entry('detected', r.detected_at.toISOString(), { detail: { onset: r.onset.toISOString() } }),
  ];
  for (const a of alerts) out.push(...alertTimeline(a.alert, a.events, a.notifications));
  if (r.acknowledged_at && !out.some((e) => e.kind === 'acknowledged'))
    out.push(entry('acknowledged', r.acknowledged_at.toISOString(), { actor: r.acknowledged_by }));
  if (r.resolved_at && !out.some((e) => e.kind === 'resolved'))
    out.push(
      entry('resolved', r.resolved_at.toISOString(), {
        actor: r.resolved_by,
        detail: { reason: r.resolution },
      }),
    );
  return sortTimeline(out);
}
