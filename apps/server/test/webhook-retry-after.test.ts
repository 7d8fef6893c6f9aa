/**
 * Retry-After in real time, through the real scheduler: a receiver that
 * answers 503 with `Retry-After: 2`, then 429 with `Retry-After: 1`, then 200
 * gets each next attempt no sooner than it asked. The backoff is set far
 * below those (ONSET_WEBHOOK_RETRY_BASE=100ms), so only Retry-After can
 * explain the waits; and the delivery still happens exactly once (the outbox
 * is at-least-once, the receiver sees one 200).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '@onset/testkit';
import { raiseRegressionAlert } from '../src/regressions/alerting.ts';
import { api, onlyWebhook } from './slo-support.ts';

let srv: TestServer;
let rx: http.Server;
const arrivals: Array<{ at: number; status: number }> = [];
const script: Array<[number, Record<string, string>]> = [
  [503, { 'retry-after': '2' }],
  [429, { 'retry-after': '1' }],
];

beforeAll(async () => {
  process.env.ONSET_WEBHOOK_RETRY_BASE = '100ms';
  rx = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [status, headers] = script[arrivals.length] ?? [200, {}];
      arrivals.push({ at: performance.now(), status });
      res.writeHead(status, headers);
      res.end();
    });
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  srv = await startTestServer({ scheduler: true });
});
afterAll(async () => {
  await srv?.close();
  await new Promise((r) => rx?.close(r));
  delete process.env.ONSET_WEBHOOK_RETRY_BASE;
});

describe('Retry-After is honoured', () => {
  it('the next attempt comes no sooner than the receiver asked, then it is delivered once', async () => {
    const port = (rx.address() as AddressInfo).port;
    const A = api(srv.url);
    const id = await onlyWebhook(A, {
      url: `http://127.0.0.1:${port}/hook`,
      format: 'json',
    });
    await raiseRegressionAlert(srv.onset.pool, {
      id: 'ra-1',
      service: 'checkout',
      op: 'request',
      view: 'gap',
      name: 'GET /lookup',
      peer: 'urlite',
      before: { p50_ms: 0.9, p99_ms: 1.4, count: 52_000 },
      after: { p50_ms: 40.9, p99_ms: 41.6, count: 8_000 },
      ratio_p50: 45.4,
      ratio_p99: 29.7,
    });
    // The scheduler's delivery job, now (the cron would run it within the minute).
    await srv.onset.pool.query(`SELECT graphile_worker.add_job('webhook_deliver', '{}'::json)`);

    const deadline = Date.now() + 30_000;
    while (arrivals.length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(arrivals.map((a) => a.status)).toEqual([503, 429, 200]);
    expect(arrivals[1]!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(arrivals[2]!.at - arrivals[1]!.at).toBeGreaterThanOrEqual(1000);

    const log = (await A.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    expect(log).toHaveLength(1);
    expect(log[0].status).toBe('delivered');
    expect(log[0].log.map((a: { status_code: number }) => a.status_code)).toEqual([503, 429, 200]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(arrivals).toHaveLength(3); // delivered: nothing more is sent
  });
});
