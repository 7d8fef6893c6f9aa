import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
/**
 * End to end on embedded PostgreSQL with real receivers on loopback:
 * an SLO, good traffic, a burst of slow spawns -> one page to every format;
 * traffic recovers -> one resolved with the same dedup_key; a silenced SLO
 * sends nothing (until the silence ends); low traffic does not page.
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
  signatureValid,
  startReceiver,
  traffic,
  type Receiver,
} from './slo-support.ts';

const SECRET = 'shh-its-a-secret';

// Passes evaluate SLOs one at a time (ONSET_SLO_BATCH, budget.ts): batching must change no alert.
process.env.ONSET_SLO_BATCH = '1';

let srv: TestServer;
let A: ReturnType<typeof api>;
const receivers: Record<
  'json' | 'slack' | 'pagerduty' | 'alertmanager' | 'alertmanager-webhook',
  Receiver
> = {} as never;
// The official PostableAlerts definitions (Alertmanager's OpenAPI), for the `alertmanager` target's bodies.
const ajv = new Ajv({ strict: false });
(ajvFormats as unknown as { default: (a: Ajv) => Ajv }).default(ajv); // CommonJS default export
const isPostableAlerts = ajv.compile(
  JSON.parse(
    readFileSync(
      new URL('./fixtures/alertmanager-postable-alerts.schema.json', import.meta.url),
      'utf8',
    ),
  ),
);
// Minute-aligned timeline in the recent past (spans may be up to 90 d old).
const M0 = Math.floor(Date.now() / MIN) * MIN;
const at = (minutesFromM0: number) => M0 + minutesFromM0 * MIN;

const pass = (now: number) => runSloPass(srv.onset.pool, { now, settleMs: 0 });
// Deliveries are due from the (injected) time of the state change; deliver "as of" a little later.
const deliver = () =>
  runDeliveryPass(srv.onset.pool, {
    now: Date.now() + 10 * MIN,
    baseUrl: srv.url,
    timeoutMs: 2000,
  });
/** The counting cursor trails the clock by SETTLE_MS (250 ms); let just-ingested spans pass it. */
const settle = () => new Promise((r) => setTimeout(r, 300));

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
  for (const f of ['json', 'slack', 'pagerduty', 'alertmanager', 'alertmanager-webhook'] as const) {
    receivers[f] = await startReceiver();
    const r = await A.post('/api/v1/webhooks', {
      url: receivers[f].url,
      format: f,
      min_severity: 'page',
      ...(f === 'json' ? { secret: SECRET } : {}),
      ...(f === 'pagerduty' ? { routing_key: 'R0UT1NGKEY0000000000000000000000' } : {}),
    });
    expect(r.status).toBe(201);
  }
});

afterAll(async () => {
  await srv?.close();
  for (const r of Object.values(receivers)) await r?.close();
});

describe('SLO burn -> page -> resolved, delivered to every format', () => {
  let sloId: string;
  let dedupKey: string;

  it('creates the SLO and counts history at creation', async () => {
    // Good traffic for three hours (10 spawns/min at 5-20 ms) before the SLO exists.
    await sendSpans(srv.otlpUrl, traffic(at(-180), at(-70), 10, 12_000));
    await settle();
    const r = await A.post('/api/v1/slos', {
      name: 'walredo spawn',
      service: 'pageserver',
      op: 'spawn',
      view: 'internal',
      name_match: 'postgres',
      threshold_ms: 100,
      objective: 0.99,
      window: '28d',
      alert_tiers: { ticket_1d: false, ticket_3d: false },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    sloId = r.body.id;
    expect(r.body.status.total).toBe(1100);
    expect(r.body.status.sli).toBe(1);
    expect(r.body.status.budget_remaining).toBe(1);
    expect(r.body.alert_tiers).toEqual({
      page_1h: true,
      page_6h: true,
      ticket_1d: false,
      ticket_3d: false,
    });
  });

  it('good traffic does not page', async () => {
    const p = await pass(at(-71) + 30_000);
    expect(p.fired).toEqual([]);
    const d = await deliver();
    expect(d.attempted).toBe(0);
  });

  it('a burst of slow spawns pages once, to each format', async () => {
    // 5 minutes: 30 slow spawns (500 ms) and 10 good ones per minute; then recovery.
    await sendSpans(srv.otlpUrl, [
      ...traffic(at(-70), at(-65), 30, 500_000),
      ...traffic(at(-70), at(-65), 10, 12_000),
    ]);
    await sendSpans(srv.otlpUrl, traffic(at(-65), at(1), 10, 12_000));

    const burstEnd = at(-66) + 30_000;
    const p = await pass(burstEnd);
    expect(p.fired).toEqual([expect.objectContaining({ slo_id: sloId, severity: 'page' })]);

    const status = (await A.get(`/api/v1/slos/${sloId}?at=${new Date(burstEnd).toISOString()}`))
      .body.status;
    // 5 m: 150 slow of 200 = 75% errors on a 1% budget = 75×.
    expect(status.burn_rates['5m']).toBe(75);
    expect(status.burn_rates['1h']).toBeGreaterThan(13.44);
    expect(status.alert).toMatchObject({
      severity: 'page',
      since: new Date(burstEnd).toISOString(),
    });
    expect(status.tiers.find((t: { name: string }) => t.name === 'page_1h')).toMatchObject({
      firing: true,
      factor: 13.44,
    });

    const d = await deliver();
    expect(d).toMatchObject({ attempted: 5, delivered: 5 });
    for (const r of Object.values(receivers)) expect(r.requests).toHaveLength(1);

    const json = receivers.json.requests[0]!;
    expect(signatureValid(json, SECRET)).toBe(true);
    expect(signatureValid(json, 'wrong-secret')).toBe(false);
    expect(json.json).toMatchObject({
      version: 1,
      status: 'firing',
      alert: {
        type: 'slo_burn',
        severity: 'page',
        slo_id: sloId,
        service: 'pageserver',
        window: '1h',
        resolved_at: null,
      },
    });
    expect(json.json.alert.url).toBe(`${srv.url}/alerts/${json.json.alert.id}`);
    expect(json.json.alert.burn_rate).toBeGreaterThan(13.44);
    dedupKey = json.json.dedup_key;
    expect(dedupKey).toMatch(/^onset-alert-\d+$/);

    const slack = receivers.slack.requests[0]!.json;
    expect(slack.text).toContain('walredo spawn');
    expect(slack.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text' } });
    expect(slack.blocks[0].text.text).toMatch(/^Page: /);

    const pd = receivers.pagerduty.requests[0]!.json;
    expect(pd).toMatchObject({
      routing_key: 'R0UT1NGKEY0000000000000000000000',
      event_action: 'trigger',
      dedup_key: dedupKey,
    });
    expect(pd.payload).toMatchObject({
      severity: 'critical',
      source: 'pageserver',
      class: 'slo_burn',
    });
    expect(pd.payload.summary.length).toBeLessThanOrEqual(1024);

    const postable = receivers.alertmanager.requests[0]!;
    expect(postable.path).toBe(
      `${new URL(receivers.alertmanager.url).pathname.replace(/\/$/, '')}/api/v2/alerts`,
    );
    expect(isPostableAlerts(postable.json), JSON.stringify(isPostableAlerts.errors)).toBe(true);
    expect(postable.json).toEqual([
      {
        labels: expect.objectContaining({
          alertname: 'OnsetSLOBurn',
          severity: 'page',
          slo_id: sloId,
          dedup_key: dedupKey,
        }),
        annotations: expect.objectContaining({ summary: expect.any(String) }),
        startsAt: expect.any(String),
        generatorURL: expect.stringMatching(/^http/),
      },
    ]); // no endsAt while firing: Alertmanager keeps it for resolve_timeout, Onset re-sends every minute

    const am = receivers['alertmanager-webhook'].requests[0]!.json;
    expect(am).toMatchObject({ version: '4', status: 'firing', truncatedAlerts: 0 });
    expect(am.alerts[0]).toMatchObject({
      status: 'firing',
      endsAt: '0001-01-01T00:00:00Z',
      labels: { alertname: 'OnsetSLOBurn', severity: 'page', slo_id: sloId },
    });

    for (const r of Object.values(receivers)) expect(dedupKeyOf(r.requests[0]!)).toBe(dedupKey);
  });

  it('a still-burning SLO does not page again', async () => {
    const p = await pass(at(-65) + 30_000);
    expect(p.fired).toEqual([]);
    await deliver();
    for (const r of Object.values(receivers)) expect(r.requests).toHaveLength(1);
  });

  it('traffic recovers -> resolved, once, with the same dedup_key', async () => {
    const p = await pass(at(0) + 30_000);
    expect(p.resolved).toEqual([expect.objectContaining({ slo_id: sloId, severity: 'page' })]);
    const d = await deliver();
    expect(d).toMatchObject({ delivered: 5 });
    await deliver();
    for (const r of Object.values(receivers)) {
      expect(r.requests).toHaveLength(2);
      expect(dedupKeyOf(r.requests[1]!)).toBe(dedupKey);
    }
    const json = receivers.json.requests[1]!;
    expect(signatureValid(json, SECRET)).toBe(true);
    expect(json.json).toMatchObject({ status: 'resolved', dedup_key: dedupKey });
    expect(json.json.alert.resolved_at).toBe(new Date(at(0) + 30_000).toISOString());
    expect(receivers.pagerduty.requests[1]!.json).toEqual({
      routing_key: 'R0UT1NGKEY0000000000000000000000',
      event_action: 'resolve',
      dedup_key: dedupKey,
    });
    const resolvedPostable = receivers.alertmanager.requests[1]!.json;
    expect(isPostableAlerts(resolvedPostable), JSON.stringify(isPostableAlerts.errors)).toBe(true);
    expect(resolvedPostable).toMatchObject([
      { endsAt: json.json.alert.resolved_at, labels: { dedup_key: dedupKey } },
    ]);
    expect(receivers['alertmanager-webhook'].requests[1]!.json).toMatchObject({
      status: 'resolved',
      alerts: [{ status: 'resolved', endsAt: json.json.alert.resolved_at }],
    });
    expect(receivers.slack.requests[1]!.json.blocks[0].text.text).toMatch(/^Resolved: /);

    const slo = (await A.get(`/api/v1/slos/${sloId}?at=${new Date(at(0) + 30_000).toISOString()}`))
      .body;
    expect(slo.status.alert).toBeNull();
    expect(slo.status.total).toBe(1100 + 200 + 660);
    expect(slo.status.good).toBe(1100 + 50 + 660);
  });

  it('keeps the history: GET /api/v1/alerts and /api/v1/alerts/{id}', async () => {
    const list = await A.get(`/api/v1/alerts?slo_id=${sloId}`);
    expect(list.status).toBe(200);
    expect(list.body.alerts).toHaveLength(1);
    const a = list.body.alerts[0];
    expect(a).toMatchObject({
      type: 'slo_burn',
      severity: 'page',
      status: 'resolved',
      dedup_key: dedupKey,
      notified: true,
    });
    const one = await A.get(`/api/v1/alerts/${a.id}`);
    expect(one.body.events.map((e: { kind: string }) => e.kind)).toEqual([
      'firing',
      'notified',
      'resolved',
    ]);
    const ack = await A.post(`/api/v1/alerts/${a.id}/ack`, {
      by: 'oncall@example.com',
      comment: 'looking',
    });
    expect(ack.status).toBe(200);
    expect(ack.body.acknowledged).toMatchObject({ by: 'oncall@example.com', comment: 'looking' });
    const again = await A.get(`/api/v1/alerts/${a.id}`);
    expect(again.body.events.map((e: { kind: string }) => e.kind)).toContain('acknowledged');
    expect((await A.get('/api/v1/alerts?status=firing')).body.alerts).toEqual([]);
  });
});

describe('silences and low traffic', () => {
  it('a silenced SLO sends nothing; its firing goes out when the silence ends', async () => {
    // Alerts only: the `alertmanager` target also gets the silence itself (docs/webhooks.md).
    const alertsTo = (r: Receiver) =>
      r.requests.filter((q) => !/\/api\/v2\/silences?\b/.test(q.path));
    const before = Object.values(receivers).map((r) => alertsTo(r).length);
    await sendSpans(srv.otlpUrl, [
      // The burst runs into the next minutes, so it still burns after the (real-time) end of the silence.
      ...traffic(at(-33), at(-3), 10, 2_000, {
        service: 'checkout',
        spanName: 'lookup',
        executable: 'lookup',
      }),
      ...traffic(at(-3), at(4), 40, 90_000, {
        service: 'checkout',
        spanName: 'lookup',
        executable: 'lookup',
      }),
    ]);
    const slo = await A.post('/api/v1/slos', {
      name: 'checkout lookups',
      service: 'checkout',
      threshold_ms: 50,
      objective: 0.995,
      window: '7d',
      alert_tiers: { ticket_1d: false, ticket_3d: false },
    });
    expect(slo.status).toBe(201);
    // Evaluation runs "as of" the injected past times below, so the silence starts before them.
    const sil = await A.post('/api/v1/silences', {
      service: 'checkout',
      starts_at: new Date(at(-60)).toISOString(),
      duration: '3h',
      comment: 'planned load test',
    });
    expect(sil.status).toBe(201);
    expect(sil.body).toMatchObject({
      service: 'checkout',
      active: true,
      comment: 'planned load test',
    });

    const p = await pass(at(-1) + 30_000);
    expect(p.fired).toEqual([expect.objectContaining({ slo_id: slo.body.id, severity: 'page' })]);
    expect((await deliver()).attempted).toBe(0);
    expect(Object.values(receivers).map((r) => alertsTo(r).length)).toEqual(before);
    // The Alertmanager behind the `alertmanager` target was told of the silence, so it holds the alert too.
    const amSilence = receivers.alertmanager.requests.find(
      (q) => q.method === 'POST' && q.path.endsWith('/api/v2/silences'),
    );
    expect(amSilence?.json).toMatchObject({
      matchers: expect.arrayContaining([
        expect.objectContaining({ name: 'service', value: 'checkout' }),
      ]),
      comment: expect.stringContaining('planned load test'),
    });
    const alert = (await A.get(`/api/v1/alerts?slo_id=${slo.body.id}`)).body.alerts[0];
    expect(alert).toMatchObject({ status: 'firing', notified: false, silenced_by: sil.body.id });

    // The silence ends while the SLO still burns: the page goes out now, once.
    expect((await A.del(`/api/v1/silences/${sil.body.id}`)).body.active).toBe(false);
    const p2 = await pass(at(3) + 30_000);
    expect(p2.released).toBe(1);
    expect((await deliver()).delivered).toBe(5);
    expect(Object.values(receivers).map((r) => alertsTo(r).length)).toEqual(
      before.map((n) => n + 1),
    );
    expect(receivers.json.requests.at(-1)!.json.alert.slo_id).toBe(slo.body.id);
  });

  it('a silence by op or by SLO matches too; an unrelated one does not', async () => {
    await sendSpans(
      srv.otlpUrl,
      traffic(at(-5), at(0), 30, 800_000, {
        service: 'indexer',
        spanName: 'fsync',
        executable: undefined,
      }),
    );
    const slo = await A.post('/api/v1/slos', {
      name: 'indexer fsync',
      service: 'indexer',
      op: 'fsync',
      threshold_ms: 100,
      objective: 0.99,
      window: '30d',
    });
    expect(slo.status).toBe(201);
    const from = new Date(at(-10)).toISOString();
    const bySlo = await A.post('/api/v1/silences', {
      slo_id: slo.body.id,
      starts_at: from,
      duration: '1h',
      comment: 'known',
    });
    const unrelated = await A.post('/api/v1/silences', {
      op: 'unmount',
      starts_at: from,
      duration: '1h',
      comment: 'other',
    });
    expect([bySlo.status, unrelated.status]).toEqual([201, 201]);
    const p = await pass(at(0) + 30_000);
    // All slow: page and ticket tiers both fire, both silenced.
    expect(
      p.fired
        .filter((f) => f.slo_id === slo.body.id)
        .map((f) => f.severity)
        .sort(),
    ).toEqual(['page', 'ticket']);
    const a = (await A.get(`/api/v1/alerts?slo_id=${slo.body.id}&status=firing`)).body.alerts;
    expect(a.map((x: { silenced_by: string }) => x.silenced_by)).toEqual([
      bySlo.body.id,
      bySlo.body.id,
    ]);
    await deliver();
    expect(receivers.json.requests.filter((r) => r.json.alert.slo_id === slo.body.id)).toEqual([]);
  });

  it('low traffic: one slow event does not page', async () => {
    // A spawn every 10 minutes for 6 hours; one of them takes 2 s.
    const spans = Array.from({ length: 36 }, (_, i) => ({
      startMs: at(-360 + i * 10) + 5_000,
      durationUs: 30_000,
      service: 'rare',
      executable: 'walredo',
    }));
    spans[spans.length - 1]!.durationUs = 2_000_000;
    await sendSpans(srv.otlpUrl, spans);
    const slo = await A.post('/api/v1/slos', {
      name: 'rare spawns',
      service: 'rare',
      op: 'spawn',
      threshold_ms: 100,
      objective: 0.999,
      window: '28d',
    });
    expect(slo.status).toBe(201);
    const p = await pass(at(0) + 30_000);
    expect(p.fired.filter((f) => f.slo_id === slo.body.id)).toEqual([]);
    const st = (
      await A.get(`/api/v1/slos/${slo.body.id}?at=${new Date(at(0) + 30_000).toISOString()}`)
    ).body.status;
    expect(st.burn_rates['1h']).toBeGreaterThan(100); // the burn is real…
    expect(st.alert).toBeNull(); // …but one slow event is not an incident
  });
});
