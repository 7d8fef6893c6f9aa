/**
 * Paging formats as real receivers take them: Slack text escaped per Slack's
 * rules, PagerDuty and Alertmanager test events that resolve themselves, and
 * the `alertmanager` target re-sending firing alerts (no endsAt) until they
 * resolve (endsAt). Receivers are real HTTP servers on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { KnownBlock } from '@slack/types';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  render,
  slackEscape,
  type DeliveryToRender,
  type SlackMessage,
  type WebhookTarget,
} from '../src/webhooks/formats.ts';
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

  it('Alertmanager: the test alert is posted, held past group_wait, then posted again with endsAt', async () => {
    const rx = await receiver();
    const id = await onlyWebhook(A, { url: rx.url, format: 'alertmanager' });
    const t0 = Date.now();
    expect((await A.post(`/api/v1/webhooks/${id}/test`, {})).status).toBe(200);
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0]!.json[0].endsAt).toBeUndefined();
    // Still firing while Alertmanager's group_wait (30 s by default) runs: the resolve waits 45 s.
    const pass = (at: number) =>
      runDeliveryPass(srv.onset.pool, { baseUrl: srv.url, now: at, random: () => 0 });
    expect((await pass(t0 + 30_000)).attempted).toBe(0);
    expect(rx.requests).toHaveLength(1);
    expect((await pass(Date.now() + 46_000)).delivered).toBe(1);
    expect(rx.requests).toHaveLength(2);
    expect(rx.requests[1]!.json[0]).toMatchObject({
      labels: rx.requests[0]!.json[0].labels,
      endsAt: expect.any(String),
    });
    const held =
      Date.parse(rx.requests[1]!.json[0].endsAt) - Date.parse(rx.requests[0]!.json[0].startsAt);
    expect(held).toBe(45_000);
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

// ---------------------------------------------------------------------------
// Every format's body against the receiver's own definition: PagerDuty's
// Events API v2 schema, Alertmanager's PostableAlerts (its OpenAPI), and for
// Slack the @slack/types Block Kit types (renderSlack is typed with them, so
// the compiler checks the shape) plus Block Kit's documented limits, which
// types cannot express. Names are hostile: `<!channel>`, `&`, `<int:id>`.
// ---------------------------------------------------------------------------

const ajv = new Ajv({ strict: false });
(ajvFormats as unknown as { default: (a: Ajv) => Ajv }).default(ajv); // CommonJS default export
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const isPagerDutyEvent = ajv.compile(fixture('pagerduty-events-v2.schema.json'));
const isPostableAlerts = ajv.compile(fixture('alertmanager-postable-alerts.schema.json'));

const target = (format: WebhookTarget['format']): WebhookTarget => ({
  id: '9',
  name: 'ops',
  url: 'https://receiver.test/hook',
  format,
  secret: null,
  routing_key: format === 'pagerduty' ? 'R0UT1NGKEY0000000000000000000000' : null,
});

const HUGE = '<!channel> & <int:id> '.repeat(400); // 8,800 characters, escaping makes it longer
const cases: Array<[string, DeliveryToRender]> = [
  [
    'regression firing',
    { id: '1', event: 'firing', dedup_key: 'onset-alert-7', payload: snapshot() },
  ],
  [
    'regression resolved',
    {
      id: '2',
      event: 'resolved',
      dedup_key: 'onset-alert-7',
      payload: snapshot({ resolved_at: '2026-11-24T11:00:00.000Z' }),
    },
  ],
  [
    'SLO burn firing',
    {
      id: '3',
      event: 'firing',
      dedup_key: 'onset-alert-8',
      payload: snapshot({
        type: 'slo_burn',
        severity: 'ticket',
        regression_id: null,
        slo_id: 's-1',
        burn_rate: 14.4,
        window: '1h',
        details: { slo_name: 'checkout <p99> & co' },
      }),
    },
  ],
  [
    'test event',
    {
      id: '4',
      event: 'test',
      dedup_key: 'onset-test-4',
      payload: snapshot({ type: 'test', details: { test: true } }),
    },
  ],
  [
    'huge names',
    {
      id: '5',
      event: 'firing',
      dedup_key: 'onset-alert-9',
      payload: snapshot({
        title: HUGE,
        service: HUGE,
        series_name: HUGE,
        window: HUGE,
        burn_rate: 2,
      }),
    },
  ],
];

/** Block Kit's documented limits (Slack's Block Kit reference) that the types do not carry. */
function blockKitProblems(m: SlackMessage): string[] {
  const p: string[] = [];
  if (typeof m.text !== 'string' || m.text.length === 0) p.push('no fallback text');
  if (m.text.length > 40_000) p.push('text over 40,000 characters');
  if (m.blocks.length > 50) p.push('more than 50 blocks');
  for (const b of m.blocks as KnownBlock[]) {
    if (b.type === 'header') {
      if (b.text.type !== 'plain_text') p.push('header text not plain_text');
      if (b.text.text.length > 150) p.push('header over 150 characters');
    } else if (b.type === 'section') {
      if ((b.fields ?? []).length > 10) p.push('section with more than 10 fields');
      for (const f of b.fields ?? [])
        if (f.text.length > 2000) p.push('field over 2,000 characters');
      if (!b.text && !b.fields?.length) p.push('section without text or fields');
    } else if (b.type === 'actions') {
      if (b.elements.length > 25) p.push('more than 25 actions');
      for (const e of b.elements) {
        if (e.type !== 'button') continue;
        if (e.text.text.length > 75) p.push('button text over 75 characters');
        if ((e.url ?? '').length > 3000) p.push('button url over 3,000 characters');
      }
    } else if (b.type === 'context') {
      if (b.elements.length > 10) p.push('context with more than 10 elements');
    } else p.push(`unexpected block ${b.type}`);
  }
  return p;
}

/** Texts Slack parses for markup: the fallback text and every mrkdwn object. */
function parsedTexts(m: SlackMessage): string[] {
  const out = [m.text];
  for (const b of m.blocks as KnownBlock[]) {
    if (b.type === 'section')
      for (const f of b.fields ?? []) if (f.type === 'mrkdwn') out.push(f.text);
    if (b.type === 'context') for (const e of b.elements) if (e.type === 'mrkdwn') out.push(e.text);
  }
  return out;
}

describe("bodies against each receiver's own definition", () => {
  it.each(cases)('%s: PagerDuty Events API v2 schema and documented limits', (_, d) => {
    const body = JSON.parse(render(target('pagerduty'), d, 'https://onset.test').body);
    expect(isPagerDutyEvent(body), JSON.stringify(isPagerDutyEvent.errors)).toBe(true);
    expect(body.dedup_key.length).toBeLessThanOrEqual(255); // PagerDuty: dedup_key max 255
    if (body.payload) expect(body.payload.summary.length).toBeLessThanOrEqual(1024); // summary max 1024
    expect(body.event_action).toBe(d.event === 'resolved' ? 'resolve' : 'trigger');
  });

  it.each(cases)("%s: Alertmanager's PostableAlerts", (_, d) => {
    const body = JSON.parse(render(target('alertmanager'), d, 'https://onset.test').body);
    expect(isPostableAlerts(body), JSON.stringify(isPostableAlerts.errors)).toBe(true);
    // Labels are values, not markup: kept exactly as named.
    expect(body[0].labels.service).toBe(d.payload.service);
  });

  it.each(cases)('%s: Slack Block Kit limits, and names as text', (_, d) => {
    const m = JSON.parse(render(target('slack'), d, 'https://onset.test').body) as SlackMessage;
    expect(blockKitProblems(m)).toEqual([]);
    for (const t of parsedTexts(m)) {
      expect(t).not.toMatch(/[<>]/); // no <!channel>, <@U…> or <url|label> can form
      expect(t.replace(/&(amp|lt|gt);/g, '')).not.toContain('&'); // every & is an entity, none cut
    }
  });

  it('the structural check fails on what Slack refuses (it can fail)', () => {
    const bad = {
      text: 'x',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } },
        { type: 'section', fields: [{ type: 'mrkdwn', text: 'f'.repeat(2001) }] },
      ],
    } as SlackMessage;
    expect(blockKitProblems(bad)).toEqual([
      'header over 150 characters',
      'field over 2,000 characters',
    ]);
    expect(isPagerDutyEvent({ routing_key: 'k', event_action: 'resolve' })).toBe(false); // no dedup_key
    expect(isPostableAlerts([{ annotations: {} }])).toBe(false); // no labels
  });

  it('`<!channel>`, `&` and `<int:id>` reach Slack as text: escaped where parsed, verbatim in plain_text', () => {
    const m = JSON.parse(
      render(target('slack'), cases[0]![1], 'https://onset.test').body,
    ) as SlackMessage;
    expect(m.text).toContain('GET /users/&lt;int:id&gt; on &lt;!channel&gt; &amp; co');
    const header = m.blocks[0] as { text: { type: string; text: string } };
    expect(header.text).toEqual({
      type: 'plain_text',
      text: 'Page: GET /users/<int:id> on <!channel> & co got 45× slower',
      emoji: true,
    });
  });
});
