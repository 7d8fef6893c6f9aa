import type { Queryable } from '../db/pool.ts';
import type { AlertStatus } from '@onset/contract';
import type { AlertSnapshot } from '../alerts/snapshot.ts';

/**
 * Write the outbox rows for one state change, inside the caller's
 * transaction. Firing goes to every enabled webhook whose min_severity
 * admits the alert; resolved only to webhooks that were sent its firing, so
 * a receiver never sees a resolve for an incident it never opened.
 */
export async function enqueueDeliveries(
  c: Queryable,
  snapshot: AlertSnapshot,
  dedupKey: string,
  event: AlertStatus,
  now: number,
): Promise<number> {
  const res = await c.query(
    `INSERT INTO webhook_deliveries (webhook_id, alert_id, event, dedup_key, payload, created_at, next_attempt_at)
     SELECT w.id, $1, $2, $3, $4, $5, $5 FROM webhooks w
      WHERE w.enabled AND (w.min_severity = 'ticket' OR $6 = 'page')
        AND ($2 = 'firing' OR EXISTS (SELECT 1 FROM webhook_deliveries f
                                       WHERE f.webhook_id = w.id AND f.alert_id = $1 AND f.event = 'firing'))
     ON CONFLICT (webhook_id, alert_id, event) WHERE alert_id IS NOT NULL DO NOTHING`,
    [snapshot.id, event, dedupKey, JSON.stringify(snapshot), new Date(now), snapshot.severity],
  );
  return res.rowCount ?? 0;
}
