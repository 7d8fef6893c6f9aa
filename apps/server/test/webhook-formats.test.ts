/**
 * Paging formats as real receivers take them: Slack text escaped per Slack's
 * rules, PagerDuty and Alertmanager test events that resolve themselves, and
 * the `alertmanager` target re-sending firing alerts (no endsAt) until they
 * resolve (endsAt). Receivers are real HTTP servers on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { render, slackEscape, type DeliveryToRender } from '../src/webhooks/formats.ts';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { refreshAlertmanagerAlerts } from '../src/webhooks/alertmanager-refresh.ts';
import { raiseRegressionAlert, resolveRegressionAlert } from '../src/regressions/alerting.ts';
import type { AlertSnapshot } from '../src/alerts/snapshot.ts';
import { api, onlyWebhook, startReceiver, type Receiver } from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
const open: Receiver[] = [];

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
});
afterAll(async () => {
  await srv?.close();
  for (const r of open) await r.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  open.push(r);
  return r;
}

const snapshot = (over: Partial<AlertSnapshot> = {}): AlertSnapshot => ({
  id: '7',
  type: 'regression',
  severity: 'page',
  title: 'GET /users/<int:id> on <!channel> & co got 45× slower',
  service: '<!channel>',
  op: 'request',
  view: 'server',
  series_name: 'GET /users/<int:id>',
  slo_id: null,
  regression_id: 'r-1',
  burn_rate: null,
  window: '<@U123>',
  started_at: '2026-11-24T10:00:00.000Z',
  resolved_at: null,
  details: {},
  ...over,
});

describe('Slack: names are text, never markup', () => {
  const d: DeliveryToRender = {
    id: '1',
    event: 'firing',
    dedup_key: 'onset-alert-7',
    payload: snapshot(),
  };
  const body = JSON.parse(
    render(
      {
        id: '1',
        name: null,
        url: 'https://hooks.slack.test/x',
        format: 'slack',
        secret: null,
        routing_key: null,
      },
      d,
      'https://onset.test',
    ).body,
  );
  const parsedTexts: string[] = [body.text];
  for (const b of body.blocks) {
    for (const f of b.fields ?? []) if (f.type === 'mrkdwn') parsedTexts.push(f.text);
    for (const e of b.elements ?? []) if (e.type === 'mrkdwn') parsedTexts.push(e.text);
  }

  it('escapes &, < and > in every text Slack parses (text and mrkdwn)', () => {
    expect(parsedTexts.length).toBeGreaterThan(4);
    for (const t of parsedTexts) {
      expect(t).not.toMatch(/[<>]/); // no <!channel>, <@U…> or <url|label> can form
      expect(t.replace(/&(amp|lt|gt);/g, '')).not.toContain('&'); // every & is an entity
    }
    expect(body.text).toContain('GET /users/&lt;int:id&gt; on &lt;!channel&gt; &amp; co');
    expect(parsedTexts).toContain('*Service*\n&lt;!channel&gt;');
  });

  it('the header is plain_text (never parsed for mentions) and keeps the name as typed', () => {
    expect(body.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text' } });
    expect(body.blocks[0].text.text).toContain('<!channel> & co');
  });

  it('slackEscape only touches the three characters Slack reserves', () => {
    expect(slackEscape('a & b <c> "d" \'e\' *f*')).toBe('a &amp; b &lt;c&gt; "d" \'e\' *f*');
  });
});

describe('test events resolve themselves where they open incidents', () => {
  it('PagerDuty: trigger, then resolve with the same dedup_key', async () => {
    const rx = await receiver();
    const id = await onlyWebhook(A, {
      url: rx.url,
      format: 'pagerduty',
      routing_key: 'R0UT1NGKEY0000000000000000000000',
    });
    const r = await A.post(`/api/v1/webhooks/${id}/test`, {});
    expect(r.status).toBe(200);
    expect(rx.requests.map((q) => q.json.event_action)).toEqual(['trigger', 'resolve']);
    expect(rx.requests[1]!.json.dedup_key).toBe(rx.requests[0]!.json.dedup_key);
    const log = (await A.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    expect(
      log.map((x: { event: string; status: string }) => `${x.event}:${x.status}`).sort(),
    ).toEqual(['resolved:delivered', 'test:delivered']);
  });

  it('Alertmanager: the test alert is posted, then posted again with endsAt', async () => {
    const rx = await receiver();
    const id = await onlyWebhook(A, { url: rx.url, format: 'alertmanager' });
    expect((await A.post(`/api/v1/webhooks/${id}/test`, {})).status).toBe(200);
    expect(rx.requests).toHaveLength(2);
    expect(rx.requests[0]!.json[0].endsAt).toBeUndefined();
    expect(rx.requests[1]!.json[0]).toMatchObject({
      labels: rx.requests[0]!.json[0].labels,
      endsAt: expect.any(String),
    });
  });

  it('Slack gets one test message and nothing to resolve', async () => {
    const rx = await receiver();
    const id = await onlyWebhook(A, { url: rx.url, format: 'slack' });
    await A.post(`/api/v1/webhooks/${id}/test`, {});
    expect(rx.requests).toHaveLength(1);
  });
});

describe('the alertmanager target re-sends while firing and stops once resolved', () => {
  it('firing: POSTed, re-sent by each refresh; resolved: endsAt, no more re-sends', async () => {
    const rx = await receiver();
    const id = await onlyWebhook(A, { url: rx.url, format: 'alertmanager' });
    const T = Date.now();
    await raiseRegressionAlert(
      srv.onset.pool,
      {
        id: 'am-1',
        service: 'checkout',
        op: 'request',
        view: 'gap',
        name: 'GET /lookup',
        peer: 'urlite',
        before: { p50_ms: 0.9, p99_ms: 1.4, count: 52_000 },
        after: { p50_ms: 40.9, p99_ms: 41.6, count: 8_000 },
        ratio_p50: 45.4,
        ratio_p99: 29.7,
      },
      { now: T },
    );
    const deliver = (now: number) =>
      runDeliveryPass(srv.onset.pool, { now, baseUrl: srv.url, timeoutMs: 2000 });
    expect(await deliver(T)).toMatchObject({ delivered: 1 });
    const refresh = () =>
      refreshAlertmanagerAlerts(srv.onset.pool, { baseUrl: srv.url, timeoutMs: 2000 });
    expect(await refresh()).toEqual({ resent: 1, failed: 0 });
    expect(await refresh()).toEqual({ resent: 1, failed: 0 });
    expect(rx.requests).toHaveLength(3);
    for (const q of rx.requests) {
      expect(q.path.endsWith('/api/v2/alerts')).toBe(true);
      expect(q.json).toEqual(rx.requests[0]!.json); // the same alert (labels), no endsAt: Alertmanager keeps it
      expect(q.json[0].endsAt).toBeUndefined();
    }
    await resolveRegressionAlert(srv.onset.pool, 'am-1', { now: T + 120_000 });
    expect(await deliver(T + 120_000)).toMatchObject({ delivered: 1 });
    expect(rx.requests[3]!.json[0].endsAt).toBe(new Date(T + 120_000).toISOString());
    expect(await refresh()).toEqual({ resent: 0, failed: 0 });
    expect(rx.requests).toHaveLength(4);
    const log = (await A.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    const firing = log.find((x: { event: string }) => x.event === 'firing');
    expect(firing.log).toHaveLength(3); // the first delivery and the two re-sends
  });
});
