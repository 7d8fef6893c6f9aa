/**
 * The on-call path on embedded PostgreSQL with real receivers on loopback:
 * SLO alert hysteresis (a burn that stops and comes back within the short
 * window stays one alert), delivery truth (a refused receiver is reported
 * failing with its error, then delivered once it is back), and acknowledge /
 * silence / resolve with who and why in the lifecycle timeline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runSloPass } from '../src/slos/evaluate.ts';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import {
  MIN,
  api,
  dedupKeyOf,
  sendSpans,
  startReceiver,
  traffic,
  type Receiver,
} from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
const M0 = Math.floor(Date.now() / MIN) * MIN;
const at = (m: number) => M0 + m * MIN;
const pass = (now: number) => runSloPass(srv.onset.pool, { now, settleMs: 0 });
/** Deliver "as of" `later` after now: retries scheduled by an earlier pass are due again. */
const deliver = (later = 10 * MIN) =>
  runDeliveryPass(srv.onset.pool, { now: Date.now() + later, baseUrl: srv.url, timeoutMs: 2000 });
const settle = () => new Promise((r) => setTimeout(r, 300));

/** An SLO on its own service that pages on the 1 h tier only (no 6 h / ticket tiers to keep it firing). */
async function pageOnlySlo(service: string): Promise<string> {
  const r = await A.post('/api/v1/slos', {
    name: `${service} spawns`,
    service,
    op: 'spawn',
    threshold_ms: 100,
    objective: 0.99,
    window: '28d',
    alert_tiers: { page_6h: false, ticket_1d: false, ticket_3d: false },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

const slow = (from: number, to: number, service: string) => [
  ...traffic(from, to, 30, 500_000, { service }),
  ...traffic(from, to, 10, 12_000, { service }),
];

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
});
afterAll(async () => {
  await srv?.close();
});

describe('SLO alert hysteresis', () => {
  let rx: Receiver;
  let hook: string;
  afterAll(async () => {
    await A.put(`/api/v1/webhooks/${hook}`, { enabled: false });
    await rx?.close();
  });

  it('a burn that stops and comes back within the short window stays one alert, paged once', async () => {
    rx = await startReceiver();
    hook = (await A.post('/api/v1/webhooks', { url: rx.url, format: 'json', name: 'hyst' })).body
      .id;
    const svc = 'hysteresis';
    await sendSpans(srv.otlpUrl, [
      ...traffic(at(-180), at(-70), 10, 12_000, { service: svc }),
      ...slow(at(-70), at(-65), svc),
      ...traffic(at(-65), at(-59), 10, 12_000, { service: svc }),
      ...slow(at(-59), at(-58), svc), // the burn comes back for a minute
      ...traffic(at(-58), at(0), 10, 12_000, { service: svc }),
    ]);
    await settle();
    const slo = await pageOnlySlo(svc);

    expect((await pass(at(-66) + 30_000)).fired).toEqual([
      expect.objectContaining({ slo_id: slo, severity: 'page' }),
    ]);
    expect((await pass(at(-64))).fired).toEqual([]); // still burning: last burn at -64
    // 4.5 min after the last burn, the 5 m window is clean: without hysteresis this resolved.
    const quiet = await pass(at(-60) + 30_000);
    expect(quiet.resolved.filter((r) => r.slo_id === slo)).toEqual([]);
    const firing = (await A.get(`/api/v1/alerts?slo_id=${slo}`)).body.alerts;
    expect(firing).toHaveLength(1);
    expect(firing[0].status).toBe('firing');
    // The burn is back within the window: the same alert goes on, nothing new fires.
    const back = await pass(at(-58));
    expect(back.fired.filter((f) => f.slo_id === slo)).toEqual([]);
    const again = (await A.get(`/api/v1/alerts?slo_id=${slo}`)).body.alerts;
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ id: firing[0].id, dedup_key: firing[0].dedup_key });
    // The minute of burn leaves the 5 m window after -54; quiet for the short window since: resolved, once.
    expect((await pass(at(-55))).resolved.filter((r) => r.slo_id === slo)).toEqual([]);
    expect((await pass(at(-52))).resolved.filter((r) => r.slo_id === slo)).toEqual([]);
    expect((await pass(at(-50))).resolved.filter((r) => r.slo_id === slo)).toEqual([
      expect.objectContaining({ alert_id: firing[0].id, slo_id: slo }),
    ]);
    await deliver();
    // Passes "as of" the past also evaluate the other tests' SLOs: count this SLO's pages.
    const mine = rx.requests.filter((q) => q.json.alert.slo_id === slo);
    expect(mine.map((q) => q.json.status)).toEqual(['firing', 'resolved']);
    expect(new Set(mine.map(dedupKeyOf))).toEqual(new Set([firing[0].dedup_key]));
  });
});

describe('delivery truth', () => {
  let down: Receiver;
  let back: Receiver | undefined;
  let hook: string;
  let slo: string;
  let alertId: string;
  afterAll(async () => {
    await A.put(`/api/v1/webhooks/${hook}`, { enabled: false });
    await back?.close();
  });

  it('a receiver that refuses connections: the alert, the SLO and the webhook say failing, with the error', async () => {
    // A port nothing listens on: take one, then close it.
    down = await startReceiver();
    const port = down.port;
    await down.close();
    hook = (
      await A.post('/api/v1/webhooks', {
        url: `http://127.0.0.1:${port}/hook`,
        format: 'json',
        name: 'oncall-bridge',
        min_severity: 'page',
      })
    ).body.id;
    const svc = 'truth';
    await sendSpans(srv.otlpUrl, [
      ...traffic(at(-120), at(-10), 10, 12_000, { service: svc }),
      ...slow(at(-10), at(0), svc),
    ]);
    await settle();
    slo = await pageOnlySlo(svc);
    const p = await pass(at(0) - 1000);
    alertId = p.fired.find((f) => f.slo_id === slo)!.alert_id;

    // Queued, not tried yet: pending, never "paged".
    const queued = (await A.get(`/api/v1/alerts/${alertId}`)).body;
    expect(queued.paging).toMatchObject({ state: 'pending', delivered: 0, pending: 1 });

    const d = await deliver();
    expect(d.retrying).toBeGreaterThanOrEqual(1);
    const a = (await A.get(`/api/v1/alerts/${alertId}`)).body;
    expect(a.paging).toMatchObject({ state: 'failing', delivered: 0, failing: 1 });
    expect(a.notifications).toEqual([
      expect.objectContaining({
        webhook_id: hook,
        webhook_name: 'oncall-bridge',
        event: 'firing',
        state: 'failing',
        attempts: 1,
        delivered_at: null,
        last_error: expect.stringContaining('ECONNREFUSED'),
        failing_since: expect.any(String),
      }),
    ]);
    expect(a.timeline.map((e: { kind: string }) => e.kind)).toEqual(['alerted', 'notify_failing']);
    expect(a.timeline[1]).toMatchObject({
      webhook_name: 'oncall-bridge',
      error: a.notifications[0].last_error,
    });

    const s = (await A.get(`/api/v1/slos/${slo}`)).body.status.alert;
    expect(s.paging.state).toBe('failing');
    expect(s.notifications[0].last_error).toContain('ECONNREFUSED');

    const w = (await A.get('/api/v1/webhooks')).body.webhooks.find(
      (x: { id: string }) => x.id === hook,
    );
    expect(w.health).toMatchObject({
      state: 'failing',
      last_delivered_at: null,
      failed_attempts: 1,
      last_error: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('the receiver comes back and the outbox delivers: delivered, with the time', async () => {
    back = await startReceiver(
      Number(new URL((await A.get(`/api/v1/webhooks/${hook}`)).body.url).port),
    );
    const d = await deliver(60 * MIN); // past the retry's backoff
    expect(d.delivered).toBeGreaterThanOrEqual(1);
    expect(back.requests.map((q) => q.json.alert.id)).toEqual([alertId]);
    const a = (await A.get(`/api/v1/alerts/${alertId}`)).body;
    expect(a.paging).toMatchObject({ state: 'paged', delivered: 1, failing: 0 });
    expect(a.notifications[0]).toMatchObject({
      state: 'delivered',
      attempts: 2,
      last_status_code: 200,
    });
    expect(a.notifications[0].delivered_at).toEqual(expect.any(String));
    // The history keeps the failure: failing since the first refused attempt, then delivered.
    expect(a.timeline.map((e: { kind: string }) => e.kind)).toEqual([
      'alerted',
      'notify_failing',
      'notified',
    ]);
    expect(a.timeline[1].error).toContain('ECONNREFUSED');
    expect((await A.get(`/api/v1/slos/${slo}`)).body.status.alert.paging.state).toBe('paged');
    const w = (await A.get(`/api/v1/webhooks/${hook}`)).body;
    expect(w.health).toMatchObject({ state: 'ok', failing_since: null, failed_attempts: 0 });
    expect(w.health.last_delivered_at).toEqual(expect.any(String));
  });
});

describe('acknowledge, silence, resolve: who and why, and no re-notification', () => {
  let rx: Receiver;
  let hook: string;
  afterAll(async () => {
    await A.put(`/api/v1/webhooks/${hook}`, { enabled: false });
    await rx?.close();
  });

  it('ack and silence change what the API reports; a new episode under the silence is not sent', async () => {
    rx = await startReceiver();
    hook = (await A.post('/api/v1/webhooks', { url: rx.url, format: 'json', name: 'pager' })).body
      .id;
    const svc = 'lifecycle';
    await sendSpans(srv.otlpUrl, [
      ...traffic(at(-180), at(-70), 10, 12_000, { service: svc }),
      ...slow(at(-70), at(-65), svc),
      ...traffic(at(-65), at(-40), 10, 12_000, { service: svc }),
      ...slow(at(-40), at(-35), svc), // a second burn, well after the first resolved
      ...traffic(at(-35), at(0), 10, 12_000, { service: svc }),
    ]);
    await settle();
    const slo = await pageOnlySlo(svc);
    const id = (await pass(at(-66) + 30_000)).fired.find((f) => f.slo_id === slo)!.alert_id;
    await deliver(0);
    // Passes "as of" the past also evaluate the other tests' SLOs: count this SLO's pages.
    const mine = () => rx.requests.filter((q) => q.json.alert.slo_id === slo);
    expect(mine()).toHaveLength(1);

    const ack = await A.post(`/api/v1/alerts/${id}/ack`, { by: 'alice', comment: 'on it' });
    expect(ack.status).toBe(200);
    expect(ack.body.acknowledged).toMatchObject({ by: 'alice', comment: 'on it' });
    const sil = await A.post('/api/v1/silences', {
      slo_id: slo,
      starts_at: new Date(at(-67)).toISOString(),
      duration: '3h',
      comment: 'fix rolling out',
      created_by: 'bob',
    });
    expect(sil.status).toBe(201);
    const a = (await A.get(`/api/v1/alerts/${id}`)).body;
    expect(a).toMatchObject({ silenced_by: sil.body.id, acknowledged: { by: 'alice' } });
    const steps = a.timeline.map(
      (e: { kind: string; actor: string | null; comment: string | null }) => [
        e.kind,
        e.actor,
        e.comment,
      ],
    );
    expect(steps).toEqual([
      ['alerted', null, null],
      ['notified', null, null],
      ['acknowledged', 'alice', 'on it'],
      ['silenced', 'bob', 'fix rolling out'],
    ]);

    // The first burn ends; the second one is a new episode, held by the silence.
    expect((await pass(at(-50))).resolved.map((r) => r.alert_id)).toContain(id);
    const second = (await pass(at(-36))).fired.find((f) => f.slo_id === slo)!;
    expect(second.alert_id).not.toBe(id);
    await deliver();
    expect(mine().map((q) => [q.json.status, q.json.alert.id])).toEqual([
      ['firing', id],
      ['resolved', id],
    ]);
    const held = (await A.get(`/api/v1/alerts/${second.alert_id}`)).body;
    expect(held).toMatchObject({ notified: false, silenced_by: sil.body.id });
    expect(held.paging.state).toBe('silenced');

    // Ending the silence says so on the alert it covered.
    await A.del(`/api/v1/silences/${sil.body.id}`);
    const ended = (await A.get(`/api/v1/alerts/${second.alert_id}`)).body;
    expect(ended.timeline.map((e: { kind: string }) => e.kind)).toContain('silence_ended');
  });

  it('resolve by hand records who and why; a second resolve is a 409', async () => {
    const firing = (await A.get('/api/v1/alerts?status=firing&service=lifecycle')).body.alerts;
    expect(firing).toHaveLength(1);
    const r = await A.post(`/api/v1/alerts/${firing[0].id}/resolve`, {
      by: 'carol',
      comment: 'load test over',
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('resolved');
    const t = (await A.get(`/api/v1/alerts/${firing[0].id}`)).body.timeline;
    expect(t.at(-1)).toMatchObject({ kind: 'resolved', actor: 'carol', comment: 'load test over' });
    expect((await A.post(`/api/v1/alerts/${firing[0].id}/resolve`, {})).status).toBe(409);
    expect((await A.post('/api/v1/alerts/999999/resolve', {})).status).toBe(404);
  });
});
