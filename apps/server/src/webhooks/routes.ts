import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { operations } from '@onset/contract';
import type { AppContext } from '../context.ts';
import { redactWebhookUrl } from './redact.ts';
import { authProblem, shownAuth, storedAuth } from './auth.ts';
import { baseUrlOf } from '../config.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { sendTestEvent } from './deliver.ts';
import { deliverySettings } from './settings.ts';
import { webhookHealth } from './health.ts';
import { EgressRefused, checkWebhookTarget, currentEgressPolicy } from './egress.ts';
import {
  deleteWebhook,
  deliveries,
  getWebhook,
  insertWebhook,
  listWebhooks,
  updateWebhook,
  type WebhookRow,
} from './store.ts';

function webhookJson(r: WebhookRow) {
  return {
    id: r.id,
    name: r.name,
    url: redactWebhookUrl(r.url),
    format: r.format,
    min_severity: r.min_severity,
    enabled: r.enabled,
    has_secret: !!r.secret,
    auth: shownAuth(r.auth),
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
  auth?: WebhookRow['auth'] | { type: 'none' };
}): void {
  const problem = authProblem(w.auth);
  if (problem) throw badRequest(problem);
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
      checkInput({ format, routing_key: b.routing_key, auth: b.auth });
      const row = await insertWebhook(pool, {
        name: b.name ?? null,
        url,
        format,
        secret: b.secret ?? null,
        routing_key: b.routing_key ?? null,
        auth: storedAuth(b.auth),
        min_severity: b.min_severity ?? 'ticket',
        enabled: b.enabled ?? true,
      });
      return reply.status(201).send(webhookJson(row));
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
      const rows = await listWebhooks(pool);
      const health = await webhookHealth(
        pool,
        rows.map((r) => r.id),
      );
      return { webhooks: rows.map((r) => ({ ...webhookJson(r), health: health.get(r.id) })) };
    },
  );

  const load = async (id: string) => {
    const row = await getWebhook(pool, id);
    if (!row) throw notFound(`webhook ${id} does not exist`);
    return row;
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
        auth: b.auth !== undefined ? storedAuth(b.auth) : cur.auth,
        min_severity: b.min_severity ?? cur.min_severity,
        enabled: b.enabled ?? cur.enabled,
      };
      checkInput(next);
      return webhookJson(await updateWebhook(pool, cur.id, next));
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
      if (!(await deleteWebhook(pool, req.params.id)))
        throw notFound(`webhook ${req.params.id} does not exist`);
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
