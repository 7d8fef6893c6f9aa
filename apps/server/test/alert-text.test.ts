/**
 * One text for every alert (alerts/text.ts): a real regression (its p50 and
 * p99 grew by different factors) and a real SLO burn, through a real server
 * on embedded PostgreSQL, delivered to real receivers on loopback in every
 * webhook format and read through MCP. Every reader shows the API's text,
 * and every number in that text is the API's number: each quantile with its
 * own ratio, latencies in units that read (s, never 14500 ms).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WEBHOOK_FORMATS, type Alert, type Regression, type WebhookFormat } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { MIN, api, sendSpans, startReceiver, traffic, type Receiver } from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
const receivers = {} as Record<WebhookFormat, Receiver>;
const END = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
const ONSET = END - 40 * MIN;

/** Milliseconds of a latency as the text writes it ("850 µs", "43.9 ms", "14.5 s", "3.5 min"). */
const UNIT_MS: Record<string, number> = { µs: 1e-3, ms: 1, s: 1e3, min: 6e4, h: 3.6e6 };
const LATENCY = /(\d+(?:\.\d+)?) (µs|ms|s|min|h)\b/g;
function latencies(text: string): number[] {
  return [...text.matchAll(LATENCY)].map((m) => Number(m[1]) * UNIT_MS[m[2]!]!);
}
/** The text rounds to 3 significant digits (2 decimals under 10): within 0.6 %. */
const near = (shown: number, api: number) =>
  expect(Math.abs(shown - api) / api, `${shown} vs the API's ${api}`).toBeLessThan(0.006);
/** A ratio is written ×N (N ≥ 10) or ×N.N. */
function ratioOf(text: string): number {
  const m = /×(\d+(?:\.\d)?)/.exec(text);
  expect(m, text).not.toBeNull();
  return Number(m![1]);
}
const nearRatio = (shown: number, api: number) =>
  expect(Math.abs(shown - api), `×${shown} vs the API's ×${api}`).toBeLessThanOrEqual(
    api >= 10 ? 0.5 : 0.05,
  );

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
  for (const format of WEBHOOK_FORMATS) {
    receivers[format] = await startReceiver();
    const r = await A.post('/api/v1/webhooks', {
      url: receivers[format].url,
      format,
      name: `rx-${format}`,
      ...(format === 'pagerduty' ? { routing_key: 'R0UT1NGKEY0000000000000000000000' } : {}),
    });
    expect(r.status, r.text).toBe(201);
  }
  // A regression: p50 10 → 200 ms (×20), p99 50 ms → 1.5 s (×30): different ratios per quantile.
  await sendSpans(srv.otlpUrl, [
    ...traffic(ONSET - 60 * MIN, ONSET, 49, 10_000, { service: 'texty', host: 'h-1' }),
    ...traffic(ONSET - 60 * MIN, ONSET, 1, 50_000, { service: 'texty', host: 'h-1' }),
    ...traffic(ONSET, END, 49, 200_000, { service: 'texty', host: 'h-1' }),
    ...traffic(ONSET, END, 1, 1_500_000, { service: 'texty', host: 'h-1' }),
    // An SLO burn: an hour of 12 ms spawns, then 8 minutes mostly 500 ms.
    ...traffic(END - 60 * MIN, END - 8 * MIN, 10, 12_000, { service: 'burny' }),
    ...traffic(END - 8 * MIN, END, 30, 500_000, { service: 'burny' }),
    ...traffic(END - 8 * MIN, END, 10, 12_000, { service: 'burny' }),
  ]);
  // The deploy that caused it: the alert's cause.
  const deploy = await A.post('/api/v1/deploys', {
    service: 'texty',
    kind: 'code',
    from_version: '1.0',
    to_version: '1.1',
    at: new Date(ONSET).toISOString(),
  });
  expect(deploy.status, deploy.text).toBe(201);
  const slo = await A.post('/api/v1/slos', {
    name: 'burny spawns',
    service: 'burny',
    op: 'spawn',
    threshold_ms: 100,
    objective: 0.99,
    window: '28d',
    alert_tiers: { page_6h: false, ticket_1d: false, ticket_3d: false },
  });
  expect(slo.status, slo.text).toBe(201);
  await new Promise((r) => setTimeout(r, 300)); // past the counting cursor's settle time
  expect((await A.post('/api/v1/detect', {})).status).toBe(200);
  expect((await A.post('/api/v1/slos/evaluate', {})).status).toBe(200);
  await runDeliveryPass(srv.onset.pool, { now: Date.now(), baseUrl: srv.url, timeoutMs: 2000 });
}, 180_000);

afterAll(async () => {
  await srv?.close();
  for (const r of Object.values(receivers)) await r?.close();
});

async function alertOf(service: string, type: Alert['type']): Promise<Alert> {
  const r = await A.get(`/api/v1/alerts?service=${service}&type=${type}`);
  expect(r.status).toBe(200);
  expect(r.body.alerts, `alerts of ${service}`).toHaveLength(1);
  return r.body.alerts[0];
}

/** What each format carried of an alert: its heading and every line a person reads. */
function carried(format: WebhookFormat, alertId: string, dedupKey: string): string[] {
  const reqs = receivers[format].requests.filter((q) => q.raw.includes(dedupKey));
  expect(reqs, `${format} got the alert`).toHaveLength(1);
  const b = reqs[0]!.json;
  switch (format) {
    case 'json':
      expect(b.alert.id).toBe(alertId);
      return [
        b.alert.title,
        ...b.alert.text.lines.map((l: { text: string }) => l.text),
        b.alert.text.cause,
      ];
    case 'slack':
      return [
        b.blocks[0].text.text,
        ...b.blocks[1].fields.map((f: { text: string }) =>
          f.text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'),
        ),
      ];
    case 'pagerduty':
      return [b.payload.summary, ...b.payload.custom_details.text, b.payload.custom_details.cause];
    case 'alertmanager':
      return [b[0].annotations.summary, b[0].annotations.description];
    case 'alertmanager-webhook':
      return [b.alerts[0].annotations.summary, b.alerts[0].annotations.description];
  }
}

describe('a regression alert', () => {
  let alert: Alert;
  let reg: Regression;
  beforeAll(async () => {
    alert = await alertOf('texty', 'regression');
    const r = await A.get(`/api/v1/regressions/${alert.regression_id}`);
    expect(r.status).toBe(200);
    reg = r.body;
  });

  it('pairs each quantile’s numbers with that quantile’s ratio, in units that read', () => {
    const lines = Object.fromEntries(alert.text.lines.map((l) => [l.label, l.text]));
    expect(Object.keys(lines)).toEqual(['p99', 'p50']);
    // The alert and the regression it is about tell the same numbers.
    expect(alert.details.before).toEqual(reg.before);
    expect(alert.details.after).toEqual(reg.after);
    for (const q of ['p50', 'p99'] as const) {
      const [before, after] = latencies(lines[q]!);
      near(before!, reg.before[`${q}_ms`]);
      near(after!, reg.after[`${q}_ms`]);
      nearRatio(ratioOf(lines[q]!), reg[`ratio_${q}`]);
    }
    // The two quantiles moved by different factors, and the text says so.
    expect(Math.abs(reg.ratio_p99 - reg.ratio_p50)).toBeGreaterThan(2);
    expect(ratioOf(lines.p99!)).not.toBe(ratioOf(lines.p50!));
    // The title carries the quantile that moved most, with its own ratio.
    expect(alert.title).toBe(alert.text.title);
    expect(alert.title).toContain(lines[reg.metric]!);
    expect(alert.title).toMatch(/^Regression: texty /);
  });

  it('names its cause in one line: the top suspect the API ranks', () => {
    const top = reg.suspects[0]!;
    expect(top).toMatchObject({ from_version: '1.0', to_version: '1.1' });
    expect(alert.text.cause).toBe(
      `suspect: texty code deploy 1.0 → 1.1 (score ${top.score.toFixed(2)})`,
    );
    expect(alert.title.endsWith(` — ${alert.text.cause}`)).toBe(true);
  });

  it('every webhook format carries the API’s text, and every latency reads in its unit', () => {
    for (const format of WEBHOOK_FORMATS) {
      const texts = carried(format, alert.id, alert.dedup_key).join('\n');
      expect(texts, format).toContain(alert.text.title);
      for (const l of alert.text.lines) expect(texts, format).toContain(l.text);
      if (alert.text.cause) expect(texts, format).toContain(alert.text.cause);
      expect(texts, format).not.toMatch(/\d{4,}(\.\d+)? ms/); // 1.5 s, never 1500 ms
    }
  });
});

describe('an SLO burn alert', () => {
  let alert: Alert;
  beforeAll(async () => {
    alert = await alertOf('burny', 'slo_burn');
  });

  it('states the burn, the objective and the slow share the API gives', async () => {
    const slo = (await A.get(`/api/v1/slos/${alert.slo_id}`)).body;
    const d = alert.details as { burn_short: number; short_window: string; objective: number };
    const burns = (text: string) => [...text.matchAll(/(\d+(?:\.\d+)?)× over (\w+)/g)];
    const [title] = burns(alert.title);
    expect(alert.title).toMatch(/^SLO "burny spawns" is burning its error budget at /);
    nearBurn(Number(title![1]), alert.burn_rate!);
    expect(title![2]).toBe(alert.window);
    const lines = alert.text.lines.map((l) => l.text);
    const [long] = burns(lines[0]!);
    nearBurn(Number(long![1]), alert.burn_rate!);
    expect(long![2]).toBe(alert.window);
    const [short] = burns(lines[1]!);
    nearBurn(Number(short![1]), d.burn_short);
    expect(short![2]).toBe(d.short_window);
    expect(latencies(lines[2]!)).toEqual([slo.threshold_ms]);
    expect(lines[2]).toContain(`${slo.objective * 100}% of requests`);
    expect(lines[2]).toContain(`over ${slo.window}`);
    // The cause: the share of slow requests the burn stands for (burn × the budget).
    const share = Number(/^([\d.]+)% of/.exec(alert.text.cause!)![1]);
    expect(Math.abs(share - alert.burn_rate! * (1 - d.objective) * 100)).toBeLessThan(0.01);
    for (const format of WEBHOOK_FORMATS) {
      const texts = carried(format, alert.id, alert.dedup_key).join('\n');
      expect(texts, format).toContain(alert.text.title);
      for (const l of alert.text.lines) expect(texts, format).toContain(l.text);
      expect(texts, format).toContain(alert.text.cause!);
    }
  });
});

/** A burn is written with 3 significant digits (2 decimals under 10). */
const nearBurn = (shown: number, api: number) =>
  expect(Math.abs(shown - api), `${shown}× vs the API's ${api}×`).toBeLessThanOrEqual(
    api >= 100 ? 0.5 : api >= 10 ? 0.05 : 0.005,
  );

describe('MCP list_alerts', () => {
  it('answers the API’s alerts with their text', async () => {
    const client = new Client({ name: 'onset-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
    try {
      const got = await client.callTool({ name: 'list_alerts', arguments: { service: 'texty' } });
      const api = (await A.get('/api/v1/alerts?service=texty&limit=50')).body;
      const mcp = got.structuredContent as { alerts: Alert[] };
      expect(mcp.alerts.map((a) => a.text)).toEqual(api.alerts.map((a: Alert) => a.text));
      expect(mcp.alerts[0]!.text.lines.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
