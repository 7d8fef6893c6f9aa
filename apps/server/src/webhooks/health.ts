/**
 * Is a receiver taking deliveries? Read from the attempt log: a webhook is
 * `failing` when its latest attempt failed, since the first failure after
 * its last success; `ok` when its latest attempt succeeded; `unused` when
 * nothing was ever attempted. Settings flags failing receivers with this.
 */
import type { Queryable } from '../db/pool.ts';
import type { WebhookHealth } from '@onset/contract';

interface HealthRow {
  webhook_id: string;
  last_ok_at: Date | null;
  last_at: Date | null;
  last_error: string | null;
  last_status_code: number | null;
  failing_since: Date | null;
  failed_attempts: string;
}

export async function webhookHealth(
  db: Queryable,
  webhookIds: string[],
): Promise<Map<string, WebhookHealth>> {
  const out = new Map<string, WebhookHealth>();
  if (!webhookIds.length) return out;
  const { rows } = await db.query<HealthRow>(
    `WITH t AS (
       SELECT d.webhook_id, t.id, t.at, t.error, t.status_code
         FROM webhook_attempts t JOIN webhook_deliveries d ON d.id = t.delivery_id
        WHERE d.webhook_id = ANY($1::bigint[])),
     ok AS (SELECT webhook_id, max(at) AS at FROM t WHERE error IS NULL GROUP BY webhook_id),
     last AS (SELECT DISTINCT ON (webhook_id) webhook_id, at, error, status_code FROM t ORDER BY webhook_id, id DESC)
     SELECT last.webhook_id::text, ok.at AS last_ok_at, last.at AS last_at, last.error AS last_error,
            last.status_code AS last_status_code,
            (SELECT min(f.at) FROM t f WHERE f.webhook_id = last.webhook_id AND f.error IS NOT NULL
                AND f.at > COALESCE(ok.at, '-infinity')) AS failing_since,
            (SELECT count(*) FROM t f WHERE f.webhook_id = last.webhook_id AND f.error IS NOT NULL
                AND f.at > COALESCE(ok.at, '-infinity')) AS failed_attempts
       FROM last LEFT JOIN ok ON ok.webhook_id = last.webhook_id`,
    [webhookIds],
  );
  for (const r of rows) {
    const failing = r.last_error !== null;
    out.set(r.webhook_id, {
      state: failing ? 'failing' : 'ok',
      last_delivered_at: r.last_ok_at ? r.last_ok_at.toISOString() : null,
      failing_since: failing && r.failing_since ? r.failing_since.toISOString() : null,
      last_error: failing ? r.last_error : null,
      last_status_code: r.last_status_code,
      failed_attempts: failing ? Number(r.failed_attempts) : 0,
    });
  }
  for (const id of webhookIds)
    if (!out.has(id))
      out.set(id, {
        state: 'unused',
        last_delivered_at: null,
        failing_since: null,
        last_error: null,
        last_status_code: null,
        failed_attempts: 0,
      });
  return out;
}
