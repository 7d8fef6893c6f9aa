/**
 * Delivery truth: what each webhook was told about an alert and whether the
 * receiver confirmed it, read from the outbox (webhook_deliveries) and its
 * attempt log. An alert counts as paged only when a receiver answered 2xx;
 * "queued" or "sent" is never reported as notified.
 */
import type { Queryable } from '../db/pool.ts';
import type {
  AlertNotification,
  AlertPaging,
  DeliveryStatus,
  WebhookFormat,
} from '@onset/contract';

interface NotificationRow {
  alert_id: string;
  webhook_id: string;
  webhook_name: string | null;
  format: WebhookFormat;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  next_attempt_at: Date | null;
  first_error_at: Date | null;
  first_error: string | null;
  first_error_status: number | null;
}

/** A delivery's first failed attempt before it was delivered (or still undelivered): the timeline's "failing since". */
export interface FirstFailure {
  at: string;
  error: string | null;
  status_code: number | null;
}

/** pending with no attempt yet, failing while retried, gave_up once final or expired. */
function stateOf(r: NotificationRow): string {
  if (r.status === 'delivered') return 'delivered';
  if (r.status === 'failed' || r.status === 'expired') return 'gave_up';
  return r.attempts > 0 ? 'failing' : 'pending';
}

/** Every alert's notifications (firing and resolved, per webhook), oldest first. */
export async function notificationsFor(
  db: Queryable,
  alertIds: string[],
): Promise<Map<string, Array<AlertNotification & { first_failure: FirstFailure | null }>>> {
  const out = new Map<string, Array<AlertNotification & { first_failure: FirstFailure | null }>>();
  if (!alertIds.length) return out;
  const { rows } = await db.query<NotificationRow>(
    `SELECT d.alert_id::text, d.webhook_id::text, w.name AS webhook_name, w.format, d.event, d.status, d.attempts,
            d.last_status_code, d.last_error, d.delivered_at,
            CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
            f.at AS first_error_at, f.error AS first_error, f.status_code AS first_error_status
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
       LEFT JOIN LATERAL (SELECT t.at, t.error, t.status_code FROM webhook_attempts t
                           WHERE t.delivery_id = d.id AND t.error IS NOT NULL ORDER BY t.id LIMIT 1) f ON true
      WHERE d.alert_id = ANY($1::bigint[])
      ORDER BY d.id`,
    [alertIds],
  );
  for (const r of rows) {
    const list = out.get(r.alert_id) ?? [];
    list.push({
      webhook_id: r.webhook_id,
      webhook_name: r.webhook_name,
      format: r.format,
      event: r.event,
      state: stateOf(r),
      status: r.status,
      attempts: r.attempts,
      last_status_code: r.last_status_code,
      last_error: r.last_error,
      delivered_at: r.delivered_at ? r.delivered_at.toISOString() : null,
      failing_since:
        r.status !== 'delivered' && r.first_error_at ? r.first_error_at.toISOString() : null,
      next_attempt_at: r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
      first_failure:
        r.first_error_at && (!r.delivered_at || r.first_error_at < r.delivered_at)
          ? {
              at: r.first_error_at.toISOString(),
              error: r.first_error,
              status_code: r.first_error_status,
            }
          : null,
    });
    out.set(r.alert_id, list);
  }
  return out;
}

/** Whether the alert's firing reached anyone (see AlertPaging in the contract). */
export function pagingOf(
  alert: { notified: boolean; silenced_by: string | null },
  notifications: AlertNotification[],
): AlertPaging {
  const firing = notifications.filter((n) => n.event === 'firing');
  const delivered = firing.filter((n) => n.state === 'delivered').length;
  const failing = firing.filter((n) => n.state === 'failing' || n.state === 'gave_up').length;
  const pending = firing.length - delivered - failing;
  const state: AlertPaging['state'] =
    !alert.notified && alert.silenced_by
      ? 'silenced'
      : !firing.length
        ? alert.silenced_by
          ? 'silenced'
          : 'no_webhook'
        : failing
          ? 'failing'
          : pending
            ? 'pending'
            : 'paged';
  return { state, silenced_by: alert.silenced_by, delivered, failing, pending };
}
