/**
 * Alertmanager forgets an alert that is not re-sent within its
 * resolve_timeout (5 min by default) when the alert carries no endsAt, which
 * is how `alertmanager` targets send firing alerts. So, every minute, each
 * firing alert already delivered to an `alertmanager` target is POSTed again,
 * as Prometheus does; each re-send is logged as an attempt of that delivery.
 * It stops once the alert resolves (the resolved delivery carries endsAt).
 */
import type { Pool } from '../db/pool.ts';
import type { AlertSnapshot } from '../alerts/snapshot.ts';
import { firingAlertIds } from '../alerts/store.ts';
import { render, type WebhookTarget } from './formats.ts';
import { post } from './deliver.ts';

export const ALERTMANAGER_REFRESH_CRON = '* * * * *';

interface FiringRow {
  id: string;
  webhook_id: string;
  dedup_key: string;
  payload: AlertSnapshot;
  url: string;
  secret: string | null;
  routing_key: string | null;
  auth: WebhookTarget['auth'];
  name: string | null;
}

export async function refreshAlertmanagerAlerts(
  pool: Pool,
  opts: { baseUrl: string; timeoutMs: number; now?: number },
): Promise<{ resent: number; failed: number }> {
  const now = new Date(opts.now ?? Date.now());
  // Which alerts fire is alerts/'s to answer (alerts/store.ts); the deliveries are ours.
  const firing = await firingAlertIds(pool);
  if (!firing.length) return { resent: 0, failed: 0 };
  const { rows } = await pool.query<FiringRow>(
    `SELECT d.id::text, d.webhook_id::text, d.dedup_key, d.payload, w.url, w.secret, w.routing_key, w.auth, w.name
       FROM webhook_deliveries d
       JOIN webhooks w ON w.id = d.webhook_id AND w.enabled AND w.format = 'alertmanager'
      WHERE d.alert_id = ANY($1::bigint[]) AND d.event = 'firing' AND d.status = 'delivered'
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r
                         WHERE r.webhook_id = d.webhook_id AND r.alert_id = d.alert_id AND r.event = 'resolved')
      ORDER BY d.id`,
    [firing],
  );
  let resent = 0;
  let failed = 0;
  for (const d of rows) {
    const target = {
      id: d.webhook_id,
      name: d.name,
      url: d.url,
      format: 'alertmanager' as const,
      secret: d.secret,
      routing_key: d.routing_key,
      auth: d.auth,
    };
    const r = render(
      target,
      { id: d.id, event: 'firing', dedup_key: d.dedup_key, payload: d.payload },
      opts.baseUrl,
    );
    const o = await post(r.url, r.body, r.headers, opts.timeoutMs);
    const ok = o.status_code !== null && o.status_code >= 200 && o.status_code < 300;
    if (ok) resent++;
    else failed++;
    await pool.query(
      `INSERT INTO webhook_attempts (delivery_id, at, status_code, error, duration_ms, response) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        d.id,
        now,
        o.status_code,
        o.error ? `re-send while firing: ${o.error}` : null,
        o.duration_ms,
        o.response,
      ],
    );
  }
  return { resent, failed };
}
