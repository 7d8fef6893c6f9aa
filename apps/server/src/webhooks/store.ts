/**
 * The `webhooks` table's rows (owned by webhooks/, with its delivery log:
 * `webhook_deliveries`, `webhook_attempts`): the CRUD the routes answer and
 * the delivery log they show. Delivery itself (claiming, attempts) is deliver.ts.
 */
import type { Delivery, Severity, WebhookAuth, WebhookFormat } from '@onset/contract';
import type { Queryable } from '../db/pool.ts';

export interface WebhookRow {
  id: string;
  name: string | null;
  url: string;
  format: WebhookFormat;
  secret: string | null;
  routing_key: string | null;
  /** Credentials sent with every request (auth.ts); never returned by the API. */
  auth: WebhookAuth | null;
  min_severity: Severity;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}
const COLS = `id::text, name, url, format, secret, routing_key, auth, min_severity, enabled, created_at, updated_at`;

const authJson = (a: WebhookAuth | null) => (a ? JSON.stringify(a) : null);

/** A webhook as it is created or replaced: the row without what the database assigns. */
export type WebhookInput = Omit<WebhookRow, 'id' | 'created_at' | 'updated_at'>;

export async function insertWebhook(db: Queryable, w: WebhookInput): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO webhooks (name, url, format, secret, routing_key, min_severity, enabled, auth)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLS}`,
    [w.name, w.url, w.format, w.secret, w.routing_key, w.min_severity, w.enabled, authJson(w.auth)],
  );
  return rows[0]!;
}

export async function listWebhooks(db: Queryable): Promise<WebhookRow[]> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLS} FROM webhooks ORDER BY id`);
  return rows;
}

export async function getWebhook(db: Queryable, id: string): Promise<WebhookRow | null> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLS} FROM webhooks WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function updateWebhook(
  db: Queryable,
  id: string,
  w: WebhookInput,
): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `UPDATE webhooks SET name=$2, url=$3, format=$4, secret=$5, routing_key=$6, min_severity=$7, enabled=$8, auth=$9, updated_at=now()
      WHERE id = $1 RETURNING ${COLS}`,
    [
      id,
      w.name,
      w.url,
      w.format,
      w.secret,
      w.routing_key,
      w.min_severity,
      w.enabled,
      authJson(w.auth),
    ],
  );
  return rows[0]!;
}

/** Removes a webhook and (by cascade) its delivery log; false when there was none. */
export async function deleteWebhook(db: Queryable, id: string): Promise<boolean> {
  const r = await db.query(`DELETE FROM webhooks WHERE id = $1`, [id]);
  return !!r.rowCount;
}

/** A webhook's delivery log, newest first, each delivery with its attempts. */
export async function deliveries(
  db: Queryable,
  webhookId: string,
  f: { id?: string; limit?: number; status?: string },
): Promise<Delivery[]> {
  const args: unknown[] = [webhookId];
  let where = 'd.webhook_id = $1';
  if (f.id) {
    args.push(f.id);
    where += ` AND d.id = $${args.length}`;
  }
  if (f.status) {
    args.push(f.status);
    where += ` AND d.status = $${args.length}`;
  }
  args.push(f.limit ?? 100);
  const { rows } = await db.query<
    Omit<Delivery, 'created_at' | 'next_attempt_at' | 'delivered_at' | 'log'> & {
      created_at: Date;
      next_attempt_at: Date;
      delivered_at: Date | null;
      log: Delivery['log'];
    }
  >(
    `SELECT d.id::text, d.event, d.alert_id::text, d.dedup_key, d.status, d.attempts, d.created_at, d.next_attempt_at,
            d.delivered_at, d.last_status_code, d.last_error,
            COALESCE((SELECT json_agg(json_build_object('at', a.at, 'status_code', a.status_code, 'error', a.error,
                                                        'duration_ms', a.duration_ms) ORDER BY a.id)
                        FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS log
       FROM webhook_deliveries d WHERE ${where} ORDER BY d.id DESC LIMIT $${args.length}`,
    args,
  );
  return rows.map((r) => ({
    ...r,
    created_at: r.created_at.toISOString(),
    next_attempt_at: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
    delivered_at: r.delivered_at ? r.delivered_at.toISOString() : null,
    log: r.log.map((a) => ({
      ...a,
      at: new Date(a.at).toISOString(),
    })),
  }));
}
