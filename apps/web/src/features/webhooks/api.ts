/** Alert webhooks: the list, creating, changing, removing and test-sending one, its delivery log. */
import type { WebhookInput, WebhookUpdate } from '@onset/contract';
import { request } from '../../api/client.ts';
import { opKey, useOp, useOpMutation } from '../../api/useOp.ts';

const LIST = opKey('GET /api/v1/webhooks');
const DELIVERIES = opKey('GET /api/v1/webhooks/:id/deliveries');

export function useWebhooks() {
  return useOp(
    'GET /api/v1/webhooks',
    {},
    { select: (r) => r.webhooks, refresh: 'never', keepPrevious: false },
  );
}

export function useCreateWebhook() {
  return useOpMutation((spec: WebhookInput) => request('POST /api/v1/webhooks', { body: spec }), {
    stale: [LIST],
    onSuccessOnly: true,
    awaitStale: true,
  });
}

/** Change a webhook (`PUT`, any subset of its fields) or remove it (`DELETE`). */
export function useWebhookChange() {
  return useOpMutation(
    ({ id, update }: { id: string; update: WebhookUpdate | 'delete' }) =>
      update === 'delete'
        ? request('DELETE /api/v1/webhooks/:id', { params: { id } })
        : request('PUT /api/v1/webhooks/:id', { params: { id }, body: update }),
    { stale: [LIST], awaitStale: true },
  );
}

export function useTestWebhook() {
  return useOpMutation(
    (id: string) => request('POST /api/v1/webhooks/:id/test', { params: { id } }),
    { stale: [DELIVERIES], awaitStale: true },
  );
}

export function useDeliveries(webhookId: string | undefined) {
  return useOp(
    'GET /api/v1/webhooks/:id/deliveries',
    { params: { id: webhookId ?? '' }, query: { limit: 50 } },
    {
      enabled: !!webhookId,
      select: (r) => r.deliveries,
      refresh: (page) => (page === false ? false : Math.min(page, 10_000)),
      keepPrevious: false,
    },
  );
}
