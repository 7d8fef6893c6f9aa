import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Delivery, operations, type Severity, type WebhookFormat } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { redactWebhookUrl } from './redact.ts';
import { baseUrlOf } from '../config.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { sendTestEvent } from './deliver.ts';
import { deliverySettings } from './settings.ts';
import { webhookHealth } from './health.ts';
import { EgressRefused, checkWebhookTarget, currentEgressPolicy } from './egress.ts';

interface WebhookRow {
  id: string;
  name: string | null;
  url: string;
  format: WebhookFormat;
  secret: string | null;
  routing_key: string | null;
  min_severity: Severity;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}
const COLS = `id::text, name, url, format, secret, routing_key, min_severity, enabled, created_at, updated_at`;

function webhookJson(r: WebhookRow) {
  return {
    id: r.id,
    name: r.name,
    url: redactWebhookUrl(r.url),
    format: r.format,
    min_severity: r.min_severity,
    enabled: r.enabled,
    has_secret: !!r.secret,
    routing_key: r.routing_key ? `…${r.routing_key.slice(-4)}` : null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/**
 * Only http(s) receivers the egress policy permits: no file: or schemeless
 * URLs, no credentials, no loopback/private/metadata literals (egress.ts;
 * host names are resolved and checked again at every delivery).
 */
function checkWebhookUrl(text: string): string {
  try {
    return checkWebhookTarget(currentEgressPolicy(), text).toString();
  } catch (err) {
    if (err instanceof EgressRefused) throw badRequest(err.message);
    throw err;
  }
}

function checkInput(w: {
  format?: string;
  routing_key?: string | null;
  secret?: string | null;
}): void {
  if (w.format === 'pagerduty' && !w.routing_key)
    throw badRequest('routing_key is required for the pagerduty format');
}

export async function webhookRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { pool, config } = ctx;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['webhooks'];

  api.post(
    '/webhooks',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Add an alert webhook',
        ...operations['POST /api/v1/webhooks'],
      },
    },
    async (req, reply) => {
      const b = req.body;
      const url = checkWebhookUrl(b.url);
      const format = b.format ?? 'json';
      checkInput({ format, routing_key: b.routing_key });
      const { rows } = await pool.query<WebhookRow>(
        `INSERT INTO webhooks (name, url, format, secret, routing_key, min_severity, enabled)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLS}`,
        [
          b.name ?? null,
          url,
          format,
          b.secret ?? null,
          b.routing_key ?? null,
          b.min_severity ?? 'ticket',
          b.enabled ?? true,
        ],
      );
      return reply.status(201).send(webhookJson(rows[0]!));
    },
  );

  api.get(
    '/webhooks',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'List webhooks',
        ...operations['GET /api/v1/webhooks'],
      },
    },
    async () => {
      const { rows } = await pool.query<WebhookRow>(`SELECT ${COLS} FROM webhooks ORDER BY id`);
      const health = await webhookHealth(
        pool,
        rows.map((r) => r.id),
      );
      return { webhooks: rows.map((r) => ({ ...webhookJson(r), health: health.get(r.id) })) };
    },
  );

  const load = async (id: string) => {
    const { rows } = await pool.query<WebhookRow>(`SELECT ${COLS} FROM webhooks WHERE id = $1`, [
      id,
    ]);
    if (!rows[0]) throw notFound(`webhook ${id} does not exist`);
    return rows[0];
  };

  api.get(
    '/webhooks/:id',
    {
      config: { scope: 'admin' },
      schema: { tags, summary: 'One webhook', ...operations['GET /api/v1/webhooks/:id'] },
    },
    async (req) => {
      const w = await load(req.params.id);
      const health = await webhookHealth(pool, [w.id]);
      return { ...webhookJson(w), health: health.get(w.id) };
    },
  );

  api.put(
    '/webhooks/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Change a webhook (omitted fields keep their value)',
        ...operations['PUT /api/v1/webhooks/:id'],
      },
    },
    async (req) => {
      const cur = await load(req.params.id);
      const b = req.body;
      const next = {
        name: b.name ?? cur.name,
        url: b.url !== undefined ? checkWebhookUrl(b.url) : cur.url,
        format: b.format ?? cur.format,
        secret: b.secret !== undefined ? b.secret || null : cur.secret,
        routing_key: b.routing_key !== undefined ? b.routing_key || null : cur.routing_key,
        min_severity: b.min_severity ?? cur.min_severity,
        enabled: b.enabled ?? cur.enabled,
      };
      checkInput(next);
      const { rows } = await pool.query<WebhookRow>(
        `UPDATE webhooks SET name=$2, url=$3, format=$4, secret=$5, routing_key=$6, min_severity=$7, enabled=$8, updated_at=now()
          WHERE id = $1 RETURNING ${COLS}`,
        [
          cur.id,
          next.name,
          next.url,
          next.format,
          next.secret,
          next.routing_key,
          next.min_severity,
          next.enabled,
        ],
      );
      return webhookJson(rows[0]!);
    },
  );

  api.delete(
    '/webhooks/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Remove a webhook and its delivery log',
        ...operations['DELETE /api/v1/webhooks/:id'],
      },
    },
    async (req, reply) => {
      const r = await pool.query(`DELETE FROM webhooks WHERE id = $1`, [req.params.id]);
      if (!r.rowCount) throw notFound(`webhook ${req.params.id} does not exist`);
      return reply.status(204).send(null);
    },
  );

  api.post(
    '/webhooks/:id/test',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary:
          'Send a test event now (one attempt, logged) and report what the receiver answered',
        ...operations['POST /api/v1/webhooks/:id/test'],
      },
    },
    async (req) => {
      await load(req.params.id);
      const s = deliverySettings();
      const id = await sendTestEvent(pool, req.params.id, {
        ...s,
        baseUrl: baseUrlOf(config, req),
      });
      const [d] = await deliveries(pool, req.params.id, { id: id! });
      return d!;
    },
  );

  api.get(
    '/webhooks/:id/deliveries',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary:
          'Delivery log: every delivery with its attempts, status codes and errors (newest first)',
        ...operations['GET /api/v1/webhooks/:id/deliveries'],
      },
    },
    async (req) => {
      await load(req.params.id);
      return {
        deliveries: await deliveries(pool, req.params.id, {
          limit: req.query.limit ?? 100,
          status: req.query.status,
        }),
      };
    },
  );
}

async function deliveries(
  pool: AppContext['pool'],
  webhookId: string,
  f: { id?: string; limit?: number; status?: string },
) {
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
  const { rows } = await pool.query<
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
