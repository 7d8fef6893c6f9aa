/**
 * Delivering the outbox. A pass expires what is past the give-up age, claims
 * due deliveries (a lease, so N servers never send the same one at once, and
 * one that dies mid-send is retried after the lease), POSTs them, and records
 * every attempt. Network errors, timeouts, 5xx and 429 are retried with
 * exponential backoff and jitter (honouring Retry-After); other statuses are
 * final. Deliveries of one alert to one webhook go out in order: a resolved
 * waits while the firing before it is still pending.
 */
import type { Pool } from '../db/pool.ts';
import { render, type DeliveryToRender, type WebhookTarget } from './formats.ts';
import type { AlertSnapshot } from '../alerts/snapshot.ts';
import { DEFAULT_DELIVERY, retryDelay, type DeliverySettings } from './settings.ts';
import { webhookDeliveries, webhookDeliverySeconds } from '../observability/metrics.ts';
import { fetch, type Response } from 'undici';
import {
  EgressRefused,
  checkWebhookTarget,
  currentEgressPolicy,
  egressDispatcher,
  sanitiseResponse,
  type EgressPolicy,
} from './egress.ts';

export interface DeliveryPassOptions extends Partial<DeliverySettings> {
  /** Base URL for links in alerts (ONSET_PUBLIC_URL). */
  baseUrl: string;
  /** "As of" time: what is due, backoff and give-up are measured from it. */
  now?: number;
  limit?: number;
  concurrency?: number;
  random?: () => number;
  /** Where deliveries may connect (default: ONSET_WEBHOOK_ALLOW, see egress.ts). */
  egress?: EgressPolicy;
}

export interface DeliveryPassResult {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
  expired: number;
  /** When the earliest pending delivery is next due (for scheduling the next pass). */
  next_due_at: string | null;
}

interface ClaimedRow {
  id: string;
  webhook_id: string;
  event: DeliveryToRender['event'];
  dedup_key: string;
  payload: AlertSnapshot;
  attempts: number;
  created_at: Date;
  url: string;
  format: WebhookTarget['format'];
  secret: string | null;
  routing_key: string | null;
  auth: WebhookTarget['auth'];
  name: string | null;
}

export interface AttemptOutcome {
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response: string | null;
  retry_after_ms: number | null;
  /** The egress policy refused the target: final, never retried. */
  refused?: boolean;
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.cause instanceof EgressRefused) return e.cause.message;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `timeout after ${timeoutMs} ms`;
  if (e?.cause?.code) return `${e.cause.code}: ${e.cause.message ?? e.message ?? ''}`.trim();
  return e?.message ?? String(err);
}

function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const t = Date.parse(header);
  return Number.isNaN(t) ? null : Math.max(0, t - now);
}

/** How much of a receiver's answer is read; the rest is not downloaded (the connection is dropped). */
export const RESPONSE_READ_BYTES = 4096;
/** How much of it is kept with the attempt. */
const RESPONSE_KEEP_CHARS = 500;

/**
 * The first `maxBytes` of a response body, then the connection is dropped:
 * a receiver answering with megabytes (or forever) costs a few KiB, not RSS.
 */
async function readBounded(res: Response, maxBytes = RESPONSE_READ_BYTES): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) return new TextDecoder().decode(Buffer.concat(chunks));
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Cancelling a body still arriving aborts the request: undici closes the socket.
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes));
}

/**
 * One POST; never throws. The connection passes the egress policy (the
 * address connected to is the one checked) and redirects are not followed.
 */
export function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  egress: EgressPolicy = currentEgressPolicy(),
): Promise<AttemptOutcome> {
  return send('POST', url, body, headers, timeoutMs, egress);
}

/** One request to a receiver, as `post` (DELETE and the like carry no body). */
export async function send(
  method: 'POST' | 'DELETE',
  url: string,
  body: string | null,
  headers: Record<string, string>,
  timeoutMs: number,
  egress: EgressPolicy = currentEgressPolicy(),
): Promise<AttemptOutcome> {
  const t0 = performance.now();
  try {
    checkWebhookTarget(egress, url);
    const res = await fetch(url, {
      method,
      headers,
      body: body ?? undefined,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      dispatcher: egressDispatcher(egress),
    });
    let text: string | null = null;
    try {
      text = sanitiseResponse(await readBounded(res), RESPONSE_KEEP_CHARS);
    } catch {
      /* the status is what matters */
    }
    return {
      status_code: res.status,
      error: res.ok ? null : `HTTP ${res.status}`,
      duration_ms: performance.now() - t0,
      response: text,
      retry_after_ms: retryAfterMs(res.headers.get('retry-after'), Date.now()),
    };
  } catch (err) {
    return {
      status_code: null,
      error: describe(err, timeoutMs),
      duration_ms: performance.now() - t0,
      response: null,
      retry_after_ms: null,
      refused: err instanceof EgressRefused || (err as Error)?.cause instanceof EgressRefused,
    };
  }
}

/** Every attempt, retried or test, counts in /metrics by format and result. */
function observeAttempt(format: string, o: AttemptOutcome): void {
  const result =
    o.status_code !== null
      ? o.status_code >= 200 && o.status_code < 300
        ? 'success'
        : 'http_error'
      : o.error?.startsWith('timeout')
        ? 'timeout'
        : 'network_error';
  webhookDeliveries.inc({ format, result });
  webhookDeliverySeconds.observe({ format }, o.duration_ms / 1000);
}

const isRetryable = (o: AttemptOutcome) =>
  !o.refused && (o.status_code === null || o.status_code >= 500 || o.status_code === 429);

async function attemptOne(
  pool: Pool,
  d: ClaimedRow,
  opts: Required<Omit<DeliveryPassOptions, 'limit' | 'concurrency'>>,
  retry: boolean,
): Promise<'delivered' | 'retrying' | 'failed'> {
  const target: WebhookTarget = {
    id: d.webhook_id,
    name: d.name,
    url: d.url,
    format: d.format,
    secret: d.secret,
    routing_key: d.routing_key,
    auth: d.auth,
  };
  const toRender: DeliveryToRender = {
    id: d.id,
    event: d.event,
    dedup_key: d.dedup_key,
    payload: d.payload,
  };
  const { body, headers, url } = render(target, toRender, opts.baseUrl);
  const o = await post(url, body, headers, opts.timeoutMs, opts.egress);
  observeAttempt(d.format, o);
  const ok = o.status_code !== null && o.status_code >= 200 && o.status_code < 300;
  // Dated when the receiver answered, not when the pass began: a pass that waits on slow
  // receivers reaches deliveries enqueued after it started, and must not date them earlier.
  const at = Math.max(opts.now, Date.now());
  const attempts = d.attempts + 1;
  let outcome: 'delivered' | 'retrying' | 'failed';
  let next: number | null = null;
  if (ok) outcome = 'delivered';
  else if (retry && isRetryable(o)) {
    outcome = 'retrying';
    const backoff = retryDelay(attempts, opts, opts.random);
    next =
      at + Math.min(Math.max(backoff, o.retry_after_ms ?? 0), Math.max(opts.maxDelayMs, backoff));
  } else outcome = 'failed';
  await pool.query(
    `WITH a AS (INSERT INTO webhook_attempts (delivery_id, at, status_code, error, duration_ms, response)
                VALUES ($1, $2, $3, $4, $5, $6))
     UPDATE webhook_deliveries SET attempts = $7, leased_until = NULL, last_status_code = $3, last_error = $4,
            status = $8, delivered_at = CASE WHEN $8 = 'delivered' THEN $2 ELSE delivered_at END,
            next_attempt_at = COALESCE($9, next_attempt_at)
      WHERE id = $1`,
    [
      d.id,
      new Date(at),
      o.status_code,
      o.error,
      o.duration_ms,
      o.response,
      attempts,
      outcome === 'retrying' ? 'pending' : outcome,
      next === null ? null : new Date(next),
    ],
  );
  return outcome;
}

const CLAIM_COLUMNS = `d.id::text, d.webhook_id::text, d.event, d.dedup_key, d.payload, d.attempts, d.created_at,
  w.url, w.format, w.secret, w.routing_key, w.auth, w.name`;

function resolved(opts: DeliveryPassOptions) {
  return {
    baseUrl: opts.baseUrl,
    now: opts.now ?? Date.now(),
    timeoutMs: opts.timeoutMs ?? DEFAULT_DELIVERY.timeoutMs,
    baseDelayMs: opts.baseDelayMs ?? DEFAULT_DELIVERY.baseDelayMs,
    maxDelayMs: opts.maxDelayMs ?? DEFAULT_DELIVERY.maxDelayMs,
    giveUpMs: opts.giveUpMs ?? DEFAULT_DELIVERY.giveUpMs,
    leaseMs: opts.leaseMs ?? DEFAULT_DELIVERY.leaseMs,
    alertmanagerTestHoldMs: opts.alertmanagerTestHoldMs ?? DEFAULT_DELIVERY.alertmanagerTestHoldMs,
    random: opts.random ?? Math.random,
    egress: opts.egress ?? currentEgressPolicy(),
  };
}

export async function runDeliveryPass(
  pool: Pool,
  options: DeliveryPassOptions,
): Promise<DeliveryPassResult> {
  const opts = resolved(options);
  const limit = options.limit ?? 100;
  const concurrency = options.concurrency ?? 8;
  const now = new Date(opts.now);
  const result: DeliveryPassResult = {
    attempted: 0,
    delivered: 0,
    retrying: 0,
    failed: 0,
    expired: 0,
    next_due_at: null,
  };
  const exp = await pool.query(
    `UPDATE webhook_deliveries SET status = 'expired', leased_until = NULL,
            last_error = COALESCE(last_error || '; ', '') || 'gave up: undelivered ' || $2 || ' s after the alert changed state'
      WHERE status = 'pending' AND created_at < $1::timestamptz - make_interval(secs => $2::float8)`,
    [now, opts.giveUpMs / 1000],
  );
  result.expired = exp.rowCount ?? 0;
  for (let round = 0; round < 50; round++) {
    const { rows } = await pool.query<ClaimedRow>(
      `WITH c AS (
         UPDATE webhook_deliveries d SET leased_until = $1::timestamptz + make_interval(secs => $3::float8 / 1000)
          WHERE d.id IN (
            SELECT x.id FROM webhook_deliveries x
             WHERE x.status = 'pending' AND x.next_attempt_at <= $1 AND (x.leased_until IS NULL OR x.leased_until <= $1)
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                                WHERE e.webhook_id = x.webhook_id AND e.dedup_key = x.dedup_key AND e.id < x.id AND e.status = 'pending')
             ORDER BY x.id LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING d.*)
       SELECT ${CLAIM_COLUMNS} FROM c d JOIN webhooks w ON w.id = d.webhook_id ORDER BY d.id`,
      [now, limit, opts.leaseMs],
    );
    if (!rows.length) break;
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const d = rows[next++]!;
        const outcome = await attemptOne(pool, d, opts, true);
        result.attempted++;
        result[outcome]++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, worker));
  }
  const due = await pool.query<{ t: Date | null }>(
    `SELECT min(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'pending'`,
  );
  result.next_due_at = due.rows[0]?.t ? due.rows[0].t.toISOString() : null;
  return result;
}

/**
 * POST /api/v1/webhooks/{id}/test: one test event, sent now, logged, not
 * retried. Receivers that open incidents get the matching resolve, so a test
 * leaves nothing open: PagerDuty right after a delivered test; Alertmanager
 * only after `alertmanagerTestHoldMs` (past its group_wait, so its own
 * receivers see the alert fire), queued in the outbox and retried like any
 * resolve.
 */
export async function sendTestEvent(
  pool: Pool,
  webhookId: string,
  options: DeliveryPassOptions,
): Promise<string | null> {
  const opts = resolved(options);
  const payload: AlertSnapshot = {
    id: 'test',
    type: 'test',
    severity: 'page',
    title: `Onset test event for webhook ${webhookId}`,
    service: 'onset',
    op: null,
    view: null,
    series_name: null,
    slo_id: null,
    regression_id: null,
    burn_rate: null,
    window: null,
    started_at: new Date(opts.now).toISOString(),
    resolved_at: null,
    details: { test: true },
  };
  const { rows } = await pool.query<ClaimedRow>(
    `WITH n AS (SELECT nextval(pg_get_serial_sequence('webhook_deliveries', 'id')) AS id),
     d AS (INSERT INTO webhook_deliveries (id, webhook_id, event, dedup_key, payload, created_at, next_attempt_at, leased_until)
           SELECT n.id, $1, 'test', 'onset-test-' || n.id, $2, $3, $3, $3::timestamptz + make_interval(secs => $4::float8 / 1000)
             FROM n RETURNING *)
     SELECT ${CLAIM_COLUMNS} FROM d JOIN webhooks w ON w.id = d.webhook_id`,
    [webhookId, JSON.stringify(payload), new Date(opts.now), opts.leaseMs],
  );
  const d = rows[0];
  if (!d) return null;
  const outcome = await attemptOne(pool, d, opts, false);
  if (outcome === 'delivered' && d.format === 'alertmanager') {
    // Resolved once the hold is over: the outbox sends it (and retries it) like any resolve.
    const at = opts.now + opts.alertmanagerTestHoldMs;
    const resolvedPayload: AlertSnapshot = { ...payload, resolved_at: new Date(at).toISOString() };
    await pool.query(
      `INSERT INTO webhook_deliveries (webhook_id, event, dedup_key, payload, created_at, next_attempt_at)
       VALUES ($1, 'resolved', $2, $3, $4, $5)`,
      [webhookId, d.dedup_key, JSON.stringify(resolvedPayload), new Date(opts.now), new Date(at)],
    );
  } else if (outcome === 'delivered' && d.format === 'pagerduty') {
    const resolvedPayload: AlertSnapshot = {
      ...payload,
      resolved_at: new Date(opts.now).toISOString(),
    };
    const { rows: resolved } = await pool.query<ClaimedRow>(
      `WITH d AS (INSERT INTO webhook_deliveries (webhook_id, event, dedup_key, payload, created_at, next_attempt_at, leased_until)
                  VALUES ($1, 'resolved', $2, $3, $4, $4, $4::timestamptz + make_interval(secs => $5::float8 / 1000)) RETURNING *)
       SELECT ${CLAIM_COLUMNS} FROM d JOIN webhooks w ON w.id = d.webhook_id`,
      [webhookId, d.dedup_key, JSON.stringify(resolvedPayload), new Date(opts.now), opts.leaseMs],
    );
    if (resolved[0]) await attemptOne(pool, resolved[0], opts, false);
  }
  return d.id;
}
