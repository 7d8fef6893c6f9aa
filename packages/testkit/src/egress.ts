/**
 * Test receivers listen on loopback, which the webhook egress policy refuses
 * by default (apps/server/src/webhooks/egress.ts). Test servers run in the
 * test's process, so permitting loopback here is what lets them deliver.
 */
export const LOOPBACK_WEBHOOK_ALLOW = '127.0.0.0/8,::1/128';

/** Permit loopback webhook receivers in this process, unless the caller already set a policy. */
export function allowLoopbackWebhooks(): void {
  process.env.ONSET_WEBHOOK_ALLOW ??= LOOPBACK_WEBHOOK_ALLOW;
}
