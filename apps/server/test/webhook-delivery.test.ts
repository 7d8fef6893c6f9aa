/**
 * The durable webhook outbox against real receivers on loopback: retries
 * through connection refused and 503, Retry-After, no retry on other 4xx,
 * ordering, give-up, the test endpoint and the delivery log, regression
 * alerts, and delivery after a server restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { freePort } from '../src/db/embedded.ts';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import {
  raiseRegressionAlert,
  resolveRegressionAlert,
  type RegressionForAlert,
} from '../src/regressions/alerting.ts';
import { runSloPass } from '../src/slos/evaluate.ts';
import {
  MIN,
  api,
  dedupKeyOf,
  onlyWebhook,
  sendSpans,
  signatureValid,
  startReceiver,
  traffic,
  type Receiver,
} from './slo-support.ts';

const HOUR = 60 * MIN;
const SECRET = 'webhook-secret';

let srv: TestServer;
let A: ReturnType<typeof api>;
const open: Receiver[] = [];
let regressionSeq = 0;

const deliver = (now: number, s: TestServer = srv) =>
  runDeliveryPass(s.onset.pool, { now, baseUrl: s.url, timeoutMs: 2000, random: () => 0.5 });

function regression(overrides: Partial<RegressionForAlert> = {}): RegressionForAlert {
  return {
    id: `r-${++regressionSeq}`,
    service: 'checkout',
    op: 'request',
    view: 'gap',
    name: 'GET /lookup',
    peer: 'urlite',
    before: { p50_ms: 0.9, p99_ms: 1.4, count: 52_000 },
    after: { p50_ms: 40.9, p99_ms: 41.6, count: 8_000 },
    ratio_p50: 45.4,
    ratio_p99: 29.7,
    ...overrides,
  };
}

async function receiver(port?: number): Promise<Receiver> {
  const r = await startReceiver(port);
  open.push(r);
  return r;
}

/** Notifications the receiver accepted (2xx), per dedup key and status: what an idempotent receiver keeps. */
function accepted(r: Receiver): Map<string, number> {
  const m = new Map<string, number>();
  for (const q of r.requests.filter((q) => q.status < 300)) {
    const k = `${dedupKeyOf(q)}:${q.json.status}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
});

afterAll(async () => {
  await srv?.close();
  for (const r of open) await r.close();
});

describe('webhook API', () => {
  it('refuses webhook URLs that are not http(s), and pagerduty without a routing key', async () => {
    for (const url of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'gopher://h/',
      'not a url',
      '/relative/path',
    ]) {
      const r = await A.post('/api/v1/webhooks', { url, format: 'json' });
      expect(r.status, url).toBe(400);
      expect(r.body.error).toBe('bad_request');
    }
    expect(
      (
        await A.post('/api/v1/webhooks', {
          url: 'https://events.pagerduty.com/v2/enqueue',
          format: 'pagerduty',
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await A.post('/api/v1/webhooks', {
          url: 'https://hooks.slack.com/services/T/B/X',
          format: 'teams',
        })
      ).status,
    ).toBe(400);
    const ok = await A.post('/api/v1/webhooks', {
      url: 'https://hooks.slack.com/services/T/B/X',
      format: 'slack',
      secret: 's',
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      format: 'slack',
      has_secret: true,
      min_severity: 'ticket',
      enabled: true,
    });
    expect(JSON.stringify(ok.body)).not.toContain('"s"');
    expect((await A.put(`/api/v1/webhooks/${ok.body.id}`, { url: 'ftp://x/' })).status).toBe(400);
    expect((await A.del(`/api/v1/webhooks/${ok.body.id}`)).status).toBe(204);
    expect((await A.get(`/api/v1/webhooks/${ok.body.id}`)).status).toBe(404);
  });

  it('POST /webhooks/{id}/test sends a signed test event now and logs the answer; failures are not retried', async () => {
    const rx = await receiver();
    const id = await onlyWebhook(A, { url: rx.url, format: 'json', secret: SECRET });
    const r = await A.post(`/api/v1/webhooks/${id}/test`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      event: 'test',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
    });
    expect(r.body.log).toEqual([expect.objectContaining({ status_code: 200, error: null })]);
    expect(rx.requests).toHaveLength(1);
    expect(signatureValid(rx.requests[0]!, SECRET)).toBe(true);
    expect(rx.requests[0]!.json).toMatchObject({
      version: 1,
      test: true,
      status: 'firing',
      alert: { type: 'test' },
    });

    rx.respond(500);
    const bad = await A.post(`/api/v1/webhooks/${id}/test`);
    expect(bad.body).toMatchObject({
      status: 'failed',
      last_status_code: 500,
      last_error: 'HTTP 500',
    });
    await deliver(Date.now() + HOUR);
    expect(rx.requests).toHaveLength(2);
    expect((await A.post('/api/v1/webhooks/999999/test')).status).toBe(404);
  });
});

describe('durable delivery', () => {
  it('receiver down (connection refused, then 503): delivered once it is back, one firing and one resolved per alert', async () => {
    const port = await freePort(); // nothing listens here yet: connection refused
    const id = await onlyWebhook(A, {
      url: `http://127.0.0.1:${port}/hook`,
      format: 'json',
      secret: SECRET,
    });
    const T = Date.now();
    const alert = await raiseRegressionAlert(srv.onset.pool, regression(), { now: T });
    expect(alert).toMatchObject({ type: 'regression', severity: 'page', status: 'firing' });

    expect(await deliver(T)).toMatchObject({ attempted: 1, retrying: 1, delivered: 0 });
    let log = (await A.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    expect(log[0]).toMatchObject({
      event: 'firing',
      status: 'pending',
      attempts: 1,
      last_status_code: null,
    });
    expect(log[0].last_error).toMatch(/ECONNREFUSED/);
    // Backoff: not due again right away.
    expect((await deliver(T + 1000)).attempted).toBe(0);

    const rx = await receiver(port);
    rx.respond(503);
    expect(await deliver(T + HOUR)).toMatchObject({ attempted: 1, retrying: 1 });
    rx.respond(200);
    expect(await deliver(T + 2 * HOUR)).toMatchObject({ attempted: 1, delivered: 1 });
    expect((await deliver(T + 3 * HOUR)).attempted).toBe(0);
    expect(rx.requests.map((q) => q.status)).toEqual([503, 200]);
    expect(accepted(rx)).toEqual(new Map([[`${alert.dedup_key}:firing`, 1]]));
    expect(rx.requests.every((q) => signatureValid(q, SECRET))).toBe(true);

    await resolveRegressionAlert(srv.onset.pool, alert.regression_id!, { now: T + 3 * HOUR });
    expect(await deliver(T + 3 * HOUR)).toMatchObject({ delivered: 1 });
    expect(accepted(rx)).toEqual(
      new Map([
        [`${alert.dedup_key}:firing`, 1],
        [`${alert.dedup_key}:resolved`, 1],
      ]),
    );

    log = (await A.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    expect(log.map((d: { event: string; status: string }) => [d.event, d.status])).toEqual([
      ['resolved', 'delivered'],
      ['firing', 'delivered'],
    ]);
    expect(log[1].log.map((a: { status_code: number | null }) => a.status_code)).toEqual([
      null,
      503,
      200,
    ]);
    expect(log[1].log[0].error).toMatch(/ECONNREFUSED/);
  });

  it('retries 429 after its Retry-After; does not retry other 4xx', async () => {
    const slow = await receiver();
    slow.respond(429, { 'retry-after': '120' });
    const gone = await receiver();
    gone.respond(404);
    await onlyWebhook(A, { url: slow.url, format: 'alertmanager-webhook' });
    await A.post('/api/v1/webhooks', { url: gone.url, format: 'slack' });
    const T = Date.now();
    await raiseRegressionAlert(srv.onset.pool, regression(), { now: T });
    expect(await deliver(T)).toMatchObject({ attempted: 2, retrying: 1, failed: 1 });
    const pending = await srv.onset.pool.query(
      `SELECT next_attempt_at FROM webhook_deliveries WHERE status = 'pending'`,
    );
    expect(pending.rows).toHaveLength(1);
    expect(pending.rows[0].next_attempt_at.getTime() - T).toBeGreaterThanOrEqual(120_000);
    expect((await deliver(T + 60_000)).attempted).toBe(0);
    slow.respond(200);
    expect(await deliver(T + 121_000)).toMatchObject({ attempted: 1, delivered: 1 });
    expect(slow.requests).toHaveLength(2);
    expect(gone.requests).toHaveLength(1); // 404 is final
  });

  it('never delivers a resolved before its firing', async () => {
    const port = await freePort();
    await onlyWebhook(A, {
      url: `http://127.0.0.1:${port}/hook`,
      format: 'pagerduty',
      routing_key: 'KEY',
    });
    const T = Date.now();
    const r = regression();
    await raiseRegressionAlert(srv.onset.pool, r, { now: T });
    await resolveRegressionAlert(srv.onset.pool, r.id, { now: T + 1000 });
    expect(await deliver(T + 2000)).toMatchObject({ attempted: 1, retrying: 1 }); // the firing; the resolved waits
    const rx = await receiver(port);
    expect(await deliver(T + HOUR)).toMatchObject({ attempted: 2, delivered: 2 });
    expect(rx.requests.map((q) => q.json.event_action)).toEqual(['trigger', 'resolve']);
    expect(new Set(rx.requests.map((q) => q.json.dedup_key)).size).toBe(1);
  });

  it('gives up after the configured age and says so in the log', async () => {
    const port = await freePort();
    const id = await onlyWebhook(A, { url: `http://127.0.0.1:${port}/hook`, format: 'json' });
    const T = Date.now();
    await raiseRegressionAlert(srv.onset.pool, regression(), { now: T });
    await deliver(T);
    const r = await runDeliveryPass(srv.onset.pool, {
      now: T + 3 * HOUR,
      baseUrl: srv.url,
      giveUpMs: 2 * HOUR,
    });
    expect(r).toMatchObject({ expired: 1, attempted: 0 });
    const log = (await A.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    expect(log[0]).toMatchObject({ status: 'expired', attempts: 1, next_attempt_at: null });
    expect(log[0].last_error).toMatch(/gave up/);
  });
});

describe('regression alerts', () => {
  it('severity comes from the ratio and the SLOs the regression touches; min_severity filters', async () => {
    const rx = await receiver();
    await onlyWebhook(A, { url: rx.url, format: 'json', min_severity: 'page' });
    const slo = await A.post('/api/v1/slos', {
      name: 'urlite lookups',
      service: 'urlite',
      op: 'request',
      view: 'server',
      threshold_ms: 10,
      objective: 0.99,
    });
    expect(slo.status).toBe(201);
    const T = Date.now();
    const small = {
      ratio_p50: 1.3,
      ratio_p99: 1.6,
      before: { p50_ms: 4, p99_ms: 5, count: 600 },
      after: { p50_ms: 5, p99_ms: 8, count: 600 },
    };
    const ticket = await raiseRegressionAlert(
      srv.onset.pool,
      regression({ service: 'urlite', view: 'server', ...small }),
      { now: T },
    );
    expect(ticket.severity).toBe('ticket');
    const page = await raiseRegressionAlert(
      srv.onset.pool,
      regression({
        service: 'urlite',
        view: 'server',
        ...small,
        after: { p50_ms: 5, p99_ms: 12, count: 600 },
      }),
      { now: T },
    );
    expect(page.severity).toBe('page');
    expect(page.details.touched_slos).toEqual([
      { id: slo.body.id, name: 'urlite lookups', threshold_ms: 10 },
    ]);
    // Raising the same regression again is idempotent.
    const again = await raiseRegressionAlert(
      srv.onset.pool,
      {
        ...regression({
          service: 'urlite',
          view: 'server',
          ...small,
          after: { p50_ms: 5, p99_ms: 12, count: 600 },
        }),
        id: page.regression_id!,
      },
      { now: T },
    );
    expect(again.id).toBe(page.id);

    await deliver(T + MIN);
    expect(rx.requests.map((q) => q.json.alert.regression_id)).toEqual([page.regression_id]);
    expect(rx.requests[0]!.json.alert).toMatchObject({
      type: 'regression',
      severity: 'page',
      url: `${srv.url}/alerts/${page.id}`,
    });
    const list = await A.get('/api/v1/alerts?type=regression&status=firing&service=urlite');
    expect(list.body.alerts.map((a: { severity: string }) => a.severity).sort()).toEqual([
      'page',
      'ticket',
    ]);
  });
});

describe('restart between firing and delivery', () => {
  it('an alert stored before the server dies is delivered by the next server', async () => {
    const rx = await receiver();
    const first = await startTestServer();
    const B = api(first.url);
    expect(
      (await B.post('/api/v1/webhooks', { url: rx.url, format: 'json', secret: SECRET })).status,
    ).toBe(201);
    const M0 = Math.floor(Date.now() / MIN) * MIN;
    await sendSpans(first.otlpUrl, [...traffic(M0 - 10 * MIN, M0 - 5 * MIN, 40, 900_000)]);
    expect(
      (
        await B.post('/api/v1/slos', {
          name: 'spawns',
          service: 'pageserver',
          op: 'spawn',
          threshold_ms: 100,
          objective: 0.99,
          window: '28d',
        })
      ).status,
    ).toBe(201);
    const p = await runSloPass(first.onset.pool, { now: M0 - 6 * MIN + 30_000, settleMs: 0 });
    expect(p.fired.map((f) => f.severity).sort()).toEqual(['page', 'ticket']);
    await first.close(); // the alerts and their outbox rows are committed; nothing was sent
    expect(rx.requests).toHaveLength(0);

    const second = await startTestServer({ databaseUrl: first.databaseUrl });
    try {
      expect(await deliver(Date.now(), second)).toMatchObject({ attempted: 2, delivered: 2 });
      expect(rx.requests).toHaveLength(2);
      expect(
        rx.requests.every((q) => signatureValid(q, SECRET) && q.json.status === 'firing'),
      ).toBe(true);
      expect(rx.requests.map((q) => q.json.alert.severity).sort()).toEqual(['page', 'ticket']);
      expect((await deliver(Date.now() + HOUR, second)).attempted).toBe(0);
    } finally {
      await second.close();
    }
  });
});
