/**
 * A regression's lifecycle is what its receivers were told, in order and
 * dated when it happened: through a real server on embedded PostgreSQL and
 * a real receiver on loopback, a regression alerts, is resolved by hand,
 * then reopened. The reopen pages again (a new episode, like an open) and
 * the lifecycle says "reopened" with who and why; each notified step of
 * the lifecycle is a request the receiver logged, none dated before the
 * transition that caused it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, TimelineEntry } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { MIN, api, sendSpans, startReceiver, traffic, type Receiver } from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
let rx: Receiver;
let webhookId = '';
let regressionId = '';
const END = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
const ONSET = END - 40 * MIN;
/** Wall-clock windows of the two actions (epoch ms). */
const acted: Record<'resolve' | 'reopen', [number, number]> = { resolve: [0, 0], reopen: [0, 0] };

const deliver = () =>
  runDeliveryPass(srv.onset.pool, { now: Date.now(), baseUrl: srv.url, timeoutMs: 2000 });

async function act(action: 'resolve' | 'reopen', body: object): Promise<void> {
  const t0 = Date.now();
  const r = await A.post(`/api/v1/regressions/${regressionId}/${action}`, body);
  expect(r.status, r.text).toBe(200);
  acted[action] = [t0, Date.now()];
  await deliver();
}

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
  rx = await startReceiver();
  const w = await A.post('/api/v1/webhooks', { url: rx.url, format: 'json', name: 'oncall' });
  expect(w.status, w.text).toBe(201);
  webhookId = w.body.id;
  // 10 ms calls for an hour, then 200 ms for 40 minutes: a ×20 step, long past the alert hold.
  await sendSpans(srv.otlpUrl, [
    ...traffic(ONSET - 60 * MIN, ONSET, 30, 10_000, { service: 'again', host: 'h-1' }),
    ...traffic(ONSET, END, 30, 200_000, { service: 'again', host: 'h-1' }),
  ]);
  expect((await A.post('/api/v1/detect', {})).status).toBe(200);
  const list = await A.get('/api/v1/regressions?service=again&status=all');
  expect(list.body.regressions).toHaveLength(1);
  regressionId = list.body.regressions[0].id;
  await deliver();
  await act('resolve', { by: 'alice', comment: 'rolled back' });
  await act('reopen', { by: 'bob', comment: 'still slow after the rollback' });
}, 180_000);

afterAll(async () => {
  await srv?.close();
  await rx?.close();
});

describe('a regression resolved by hand, then reopened', () => {
  let timeline: TimelineEntry[];
  let alerts: Alert[];
  beforeAll(async () => {
    const r = await A.get(`/api/v1/regressions/${regressionId}/timeline`);
    expect(r.status).toBe(200);
    ({ timeline, alerts } = r.body);
  });

  it('pages again: a second episode fires, sent like an open, and the regression is open', async () => {
    expect(alerts.map((a) => a.status)).toEqual(['resolved', 'firing']);
    expect(alerts[1]!.dedup_key).not.toBe(alerts[0]!.dedup_key);
    expect(alerts[1]!.severity).toBe(alerts[0]!.severity);
    expect(alerts[1]!.paging.state).toBe('paged');
    expect((await A.get(`/api/v1/regressions/${regressionId}`)).body.status).toBe('open');
  });

  it('the lifecycle says reopened, by whom and why, between the resolve and the new alert', () => {
    expect(timeline.map((e) => e.kind)).toEqual([
      'detected',
      'alerted',
      'notified',
      'resolved',
      'notified',
      'reopened',
      'alerted',
      'notified',
    ]);
    expect(timeline[3]).toMatchObject({ actor: 'alice', comment: 'rolled back' });
    expect(timeline[5]).toMatchObject({
      actor: 'bob',
      comment: 'still slow after the rollback',
      alert_id: alerts[1]!.id,
    });
  });

  it('steps are dated when they happened: the resolve and reopen within their requests', () => {
    const at = (i: number) => Date.parse(timeline[i]!.at);
    for (const [i, action] of [
      [3, 'resolve'],
      [5, 'reopen'],
      [6, 'reopen'],
    ] as const) {
      expect(at(i)).toBeGreaterThanOrEqual(acted[action][0]);
      expect(at(i)).toBeLessThanOrEqual(acted[action][1]);
    }
    // Never a delivery dated before what it tells.
    for (let i = 1; i < timeline.length; i++) expect(at(i)).toBeGreaterThanOrEqual(at(i - 1));
  });

  it('what the receiver logged is the lifecycle’s notified steps, one for one, in order', () => {
    const notified = timeline.filter((e) => e.kind === 'notified');
    expect(rx.requests.map((q) => [q.json.status, q.json.alert.id])).toEqual(
      notified.map((e) => [e.detail.event, e.alert_id]),
    );
    expect(notified.every((e) => e.webhook_id === webhookId)).toBe(true);
    rx.requests.forEach((q, i) => {
      const step = notified[i]!;
      // Each delivery is dated by its answer: not before the receiver logged it (one clock, one process).
      expect(Date.parse(step.at)).toBeGreaterThanOrEqual(q.at);
      expect(Date.parse(step.at) - q.at).toBeLessThan(5000);
      expect(q.json.dedup_key).toBe(alerts.find((a) => a.id === step.alert_id)!.dedup_key);
    });
  });
});
