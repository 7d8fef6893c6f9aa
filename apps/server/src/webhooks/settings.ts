import { parseDuration } from '@onset/contract';

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
}

export const DEFAULT_DELIVERY: DeliverySettings = {
  timeoutMs: 10_000,
  baseDelayMs: 5_000,
  maxDelayMs: 10 * 60_000,
  giveUpMs: 24 * 3_600_000,
  leaseMs: 2 * 60_000,
};

function dur(env: NodeJS.ProcessEnv, key: string, dflt: number): number {
  const v = env[key];
  if (!v) return dflt;
  try {
    return parseDuration(v);
  } catch (e) {
    throw new Error(`${key}: ${(e as Error).message}`);
  }
}

/**
 * ONSET_WEBHOOK_TIMEOUT (10s), ONSET_WEBHOOK_RETRY_BASE (5s),
 * ONSET_WEBHOOK_RETRY_MAX (10m), ONSET_WEBHOOK_GIVE_UP (24h).
 */
export function deliverySettings(env: NodeJS.ProcessEnv = process.env): DeliverySettings {
  return {
    timeoutMs: dur(env, 'ONSET_WEBHOOK_TIMEOUT', DEFAULT_DELIVERY.timeoutMs),
    baseDelayMs: dur(env, 'ONSET_WEBHOOK_RETRY_BASE', DEFAULT_DELIVERY.baseDelayMs),
    maxDelayMs: dur(env, 'ONSET_WEBHOOK_RETRY_MAX', DEFAULT_DELIVERY.maxDelayMs),
    giveUpMs: dur(env, 'ONSET_WEBHOOK_GIVE_UP', DEFAULT_DELIVERY.giveUpMs),
    leaseMs: DEFAULT_DELIVERY.leaseMs,
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
