import type { Queryable } from '../slos/store.ts';
import type { AlertRow } from '../alerts/state.ts';

/** The alert as it was at a state change: what every format renders from. */
export interface AlertSnapshot {
  id: string;
  type: 'slo_burn' | 'regression' | 'test';
  severity: 'page' | 'ticket';
  title: string;
  service: string | null;
  op: string | null;
  view: string | null;
  series_name: string | null;
  slo_id: string | null;
  regression_id: string | null;
  burn_rate: number | null;
  window: string | null;
  started_at: string;
  resolved_at: string | null;
  details: Record<string, unknown>;
}

export function snapshotOf(a: AlertRow): AlertSnapshot {
  return {
    id: a.id,
    type: a.type,
    severity: a.severity,
    title: a.title,
    service: a.service,
    op: a.op,
    view: a.view,
    series_name: a.series_name,
    slo_id: a.slo_id,
    regression_id: a.regression_id,
    burn_rate: a.burn_rate,
    window: a.burn_window,
    started_at: a.started_at.toISOString(),
    resolved_at: a.resolved_at ? a.resolved_at.toISOString() : null,
    details: a.details,
  };
}

/** Where the alert is shown in the UI. */
export function alertUrl(
  a: { type: string; slo_id: string | null; regression_id: string | null; id: string },
  baseUrl: string,
): string {
  const base = baseUrl.replace(/\/+$/, '');
  if (a.type === 'slo_burn' && a.slo_id) return `${base}/slos/${a.slo_id}`;
  if (a.type === 'regression' && a.regression_id)
    return `${base}/regressions/${encodeURIComponent(a.regression_id)}`;
  return `${base}/alerts/${a.id}`;
}

/**
 * Write the outbox rows for one state change, inside the caller's
 * transaction. Firing goes to every enabled webhook whose min_severity
 * admits the alert; resolved only to webhooks that were sent its firing, so
 * a receiver never sees a resolve for an incident it never opened.
 */
export async function enqueueDeliveries(
  c: Queryable,
  alert: AlertRow,
  event: 'firing' | 'resolved',
  now: number,
): Promise<number> {
  const res = await c.query(
    `INSERT INTO webhook_deliveries (webhook_id, alert_id, event, dedup_key, payload, created_at, next_attempt_at)
     SELECT w.id, $1, $2, $3, $4, $5, $5 FROM webhooks w
      WHERE w.enabled AND (w.min_severity = 'ticket' OR $6 = 'page')
        AND ($2 = 'firing' OR EXISTS (SELECT 1 FROM webhook_deliveries f
                                       WHERE f.webhook_id = w.id AND f.alert_id = $1 AND f.event = 'firing'))
     ON CONFLICT (webhook_id, alert_id, event) WHERE alert_id IS NOT NULL DO NOTHING`,
    [
      alert.id,
      event,
      alert.dedup_key,
      JSON.stringify(snapshotOf(alert)),
      new Date(now),
      alert.severity,
    ],
  );
  return res.rowCount ?? 0;
}
