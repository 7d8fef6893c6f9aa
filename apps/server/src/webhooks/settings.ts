import { z } from 'zod';
import { envDuration, parseEnv } from '../config.ts';

export interface DeliverySettings {
  /** Per-request timeout. */
  timeoutMs: number;
  /** First retry delay; doubles per attempt (with jitter) up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A delivery still failing this long after its state change is given up (status "expired"). */
  giveUpMs: number;
  /** How long a claimed delivery is reserved for the pass that claimed it. */
  leaseMs: number;
  /**
   * How long a test alert sent to an `alertmanager` target stays firing before its
   * resolve is sent: past Alertmanager's group_wait (30 s by default), so its
   * receivers are really notified.
   */
  alertmanagerTestHoldMs: number;
}

export const DEFAULT_DELIVERY: DeliverySettings = {
  timeoutMs: 10_000,
  baseDelayMs: 5_000,
  maxDelayMs: 10 * 60_000,
  giveUpMs: 24 * 3_600_000,
  leaseMs: 2 * 60_000,
  alertmanagerTestHoldMs: 45_000,
};

/** The webhook variables, with the defaults above (docs/deploy.md lists them). */
export const WebhookEnv = z.object({
  ONSET_WEBHOOK_TIMEOUT: envDuration('10s'),
  ONSET_WEBHOOK_RETRY_BASE: envDuration('5s'),
  ONSET_WEBHOOK_RETRY_MAX: envDuration('10m'),
  ONSET_WEBHOOK_GIVE_UP: envDuration('24h'),
  ONSET_ALERTMANAGER_TEST_HOLD: envDuration('45s'),
});

export function deliverySettings(env: NodeJS.ProcessEnv = process.env): DeliverySettings {
  const e = parseEnv(WebhookEnv, env);
  return {
    timeoutMs: e.ONSET_WEBHOOK_TIMEOUT,
    baseDelayMs: e.ONSET_WEBHOOK_RETRY_BASE,
    maxDelayMs: e.ONSET_WEBHOOK_RETRY_MAX,
    giveUpMs: e.ONSET_WEBHOOK_GIVE_UP,
    leaseMs: DEFAULT_DELIVERY.leaseMs,
    alertmanagerTestHoldMs: e.ONSET_ALERTMANAGER_TEST_HOLD,
  };
}

/** Exponential backoff with "equal jitter": half fixed, half random, so retries of many deliveries spread out. */
export function retryDelay(
  attempt: number,
  s: Pick<DeliverySettings, 'baseDelayMs' | 'maxDelayMs'>,
  random = Math.random,
): number {
  const exp = Math.min(s.maxDelayMs, s.baseDelayMs * Math.pow(2, Math.max(0, attempt - 1)));
  return exp / 2 + random() * (exp / 2);
}
