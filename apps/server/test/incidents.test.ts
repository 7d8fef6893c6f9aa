/**
 * One incident, one regression (docs/regressions.md "One incident, one
 * regression"), through a real server on embedded PostgreSQL with traffic
 * from the official OTel SDK: a callee that slows down while its responses
 * start waiting on the delayed ACK moves every view of its edge and opens ONE
 * regression carrying each view's evidence; three routes of one service
 * stepping together are one regression listing each; two unrelated services
 * stepping in the same minute stay two. Then a series whose history arrives
 * late is found in a later pass: it joins the open regression of its service
 * (and, showing the step better, heads it) without paging again. A rollout
 * whose canary and rest are 50 minutes apart is one regression; two releases
 * of one service 50 minutes apart are two.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, type Span } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { api, onlyWebhook, startReceiver, type Receiver } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const ONSET = END - 40 * MIN;
const FROM = ONSET - 180 * MIN;

let server: TestServer;
let rx: Receiver;
let A: ReturnType<typeof api>;
let first: Regression[] = [];

/** F and G: markers of their first waves, posted before the first pass; of their second, after it. */
const CANARY = ONSET - 50 * MIN;
const markerIds: Record<string, string> = {};

async function detect(upto = END): Promise<{ opened: number; grouped: number }> {
  const res = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
  expect(res.status, res.text).toBe(200);
  return res.body.detection.regressions;
}

async function regressions(): Promise<Regression[]> {
  const res = await A.get('/api/v1/regressions');
  expect(res.status).toBe(200);
  return res.body.regressions as Regression[];
}

/** Firing notifications the receiver got, per regression id. */
function firingPerRegression(): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rx.requests) {
    const a = r.json?.alert;
    if (r.json?.status !== 'firing' || a?.type !== 'regression') continue;
    out.set(a.regression_id, (out.get(a.regression_id) ?? 0) + 1);
  }
  return out;
}

const deliver = () =>
  runDeliveryPass(server.onset.pool, { now: Date.now() + 10 * MIN, baseUrl: server.url });

/** `n` spans a minute of `ms(after)` on each host, for every minute of [from, to). */
function each(from: number, to: number, n: number, fn: (startMs: number, after: boolean) => void) {
  for (let m = from; m < to; m += MIN)
    for (let i = 0; i < n; i++) fn(m + ((i + 0.5) * MIN) / n, m >= ONSET);
}

/** The incidents of phase 1 (and the flat series beside them). */
function phase1(tr: Traffic) {
  // A. shop → stock GET /items: stock's handler goes 5 → 25 ms and its responses now wait ~40 ms
  // for the delayed ACK, so client, server and gap views all move.
  const shop = { 'service.name': 'shop', 'host.name': 'shop-1' };
  const stock = { 'service.name': 'stock', 'host.name': 'stock-1' };
  each(FROM, END, 20, (t, after) => {
    const serverMs = tr.lognormal(after ? 25 : 5, 0.08);
    const netMs = 0.2 + tr.rand() * 0.1 + (after ? 39.6 + tr.rand() * 0.8 : 0);
    const client: Span = tr.span(shop, 'GET', SpanKind.CLIENT, t, serverMs + netMs, {
      'http.request.method': 'GET',
      'http.route': '/items',
      'peer.service': 'stock',
      'server.address': 'stock',
    });
    tr.span(
      stock,
      'GET',
      SpanKind.SERVER,
      t + netMs / 2,
      serverMs,
      { 'http.request.method': 'GET', 'http.route': '/items' },
      client,
    );
  });
  // B. api: three routes step together (10 → 30 ms) on two hosts; its health check stays flat.
  for (const host of ['api-1', 'api-2']) {
    const res = { 'service.name': 'api', 'host.name': host };
    for (const [method, route] of [
      ['GET', '/a'],
      ['GET', '/b'],
      ['POST', '/c'],
    ] as const)
      each(FROM, END, 8, (t, after) =>
        tr.span(res, method, SpanKind.SERVER, t, tr.lognormal(after ? 30 : 10, 0.1), {
          'http.request.method': method,
          'http.route': route,
        }),
      );
    each(FROM, END, 8, (t) =>
      tr.span(res, 'GET', SpanKind.SERVER, t, tr.lognormal(2, 0.1), {
        'http.request.method': 'GET',
        'http.route': '/health',
      }),
    );
  }
  // C. alpha and beta, unrelated, step in the same minute.
  for (const service of ['alpha', 'beta'])
    each(FROM, END, 10, (t, after) =>
      tr.span(
        { 'service.name': service, 'host.name': `${service}-1` },
        'GET',
        SpanKind.SERVER,
        t,
        tr.lognormal(after ? 30 : 10, 0.1),
        { 'http.request.method': 'GET', 'http.route': `/${service}` },
      ),
    );
  // E. cart: a rollout in two waves — its requests go 10 → 20 ms 20 minutes before the onset, then to 60 ms.
  each(FROM, END, 10, (t) =>
    tr.span(
      { 'service.name': 'cart', 'host.name': 'cart-1' },
      'GET',
      SpanKind.SERVER,
      t,
      tr.lognormal(t >= ONSET ? 60 : t >= ONSET - 20 * MIN ? 20 : 10, 0.1),
      { 'http.request.method': 'GET', 'http.route': '/cart' },
    ),
  );
  // D. jobs: spawns of `resize` go 5 → 15 ms (its `thumb` spawns arrive in phase 2).
  spawns(tr, 'resize', 15);
  // F. orders: release 2.5.0 makes requests 10 → 60 ms, on orders-1 (canary) 50 minutes before the rest.
  for (const host of ['orders-1', 'orders-2', 'orders-3', 'orders-4'])
    each(FROM, END, 10, (t) =>
      tr.span(
        { 'service.name': 'orders', 'host.name': host },
        'GET',
        SpanKind.SERVER,
        t,
        tr.lognormal(t >= (host === 'orders-1' ? CANARY : ONSET) ? 60 : 10, 0.1),
        { 'http.request.method': 'GET', 'http.route': '/orders' },
      ),
    );
  // G. billing: two releases 50 minutes apart, 10 → 20 ms (3.1.0), then 20 → 60 ms (3.2.0).
  each(FROM, END, 10, (t) =>
    tr.span(
      { 'service.name': 'billing', 'host.name': 'billing-1' },
      'GET',
      SpanKind.SERVER,
      t,
      tr.lognormal(t >= ONSET ? 60 : t >= CANARY ? 20 : 10, 0.1),
      { 'http.request.method': 'GET', 'http.route': '/invoices' },
    ),
  );
}

const WAVES = {
  'orders canary': {
    service: 'orders',
    hosts: ['orders-1'],
    kind: 'code',
    from_version: '2.4.0',
    to_version: '2.5.0',
    at: CANARY,
  },
  'orders rest': {
    service: 'orders',
    hosts: ['orders-2', 'orders-3', 'orders-4'],
    kind: 'code',
    from_version: '2.4.0',
    to_version: '2.5.0',
    at: ONSET,
  },
  'billing 3.1.0': {
    service: 'billing',
    kind: 'code',
    from_version: '3.0.2',
    to_version: '3.1.0',
    at: CANARY,
  },
  'billing 3.2.0': {
    service: 'billing',
    kind: 'code',
    from_version: '3.1.0',
    to_version: '3.2.0',
    at: ONSET,
  },
} as const;

async function postMarkers(...names: (keyof typeof WAVES)[]) {
  for (const name of names) {
    const { at, ...body } = WAVES[name];
    // A CI hook posts when its deploy step has finished, a minute after the change.
    const res = await A.post('/api/v1/deploys', {
      ...body,
      at: new Date(at + MIN).toISOString(),
    });
    expect(res.status, res.text).toBe(201);
    markerIds[name] = res.body.id;
  }
}

/** Spawns of one executable of `jobs`, 5 ms before the onset and `afterMs` since. */
function spawns(tr: Traffic, executable: string, afterMs: number) {
  each(FROM, END, 10, (t, after) =>
    tr.span(
      { 'service.name': 'jobs', 'host.name': 'jobs-1' },
      'spawn',
      SpanKind.INTERNAL,
      t,
      tr.lognormal(after ? afterMs : 5, 0.1),
      { 'process.executable.name': executable },
    ),
  );
}

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  rx = await startReceiver();
  await onlyWebhook(A, { url: rx.url, format: 'json' });
  const tr = new Traffic(3);
  phase1(tr);
  await tr.send(server.otlpUrl);
  // A pass in the first waves' time (only their markers posted), then one at the end.
  await postMarkers('orders canary', 'billing 3.1.0');
  await detect(ONSET - 10 * MIN);
  await postMarkers('orders rest', 'billing 3.2.0');
  await detect();
  first = await regressions();
  await deliver();
}, 180_000);

afterAll(async () => {
  await rx?.close();
  await server?.close();
});

const of = (rs: Regression[], service: string) => rs.filter((r) => r.service === service);
const views = (r: Regression) => r.members.map((m) => m.view);

describe('one incident, one regression', () => {
  it('an edge incident seen by the client, the server and the gap is ONE regression carrying each view’s evidence, headed by the clearest', () => {
    const edge = first.filter((r) => r.service === 'shop' || r.service === 'stock');
    expect(edge.map((r) => `${r.service} ${r.view} ${r.name}`)).toHaveLength(1);
    const r = edge[0]!;
    expect(r).toMatchObject({ op: 'request', name: 'GET /items' });
    // Client, gap and both server series (the edge's and stock's own) are members.
    expect([...views(r)].sort()).toEqual(['client', 'gap', 'server', 'server']);
    expect(r.members.filter((m) => m.service === 'stock').map((m) => [m.view, m.peer])).toEqual([
      ['server', null],
    ]);
    // The headline is listed first, is the member with the largest ratio, and fills the regression's fields.
    const strength = (m: Regression['members'][0]) => Math.max(m.ratio_p50, m.ratio_p99);
    const head = r.members[0]!;
    expect(r.members.filter((m) => m.headline)).toEqual([head]);
    for (const m of r.members) expect(strength(head)).toBeGreaterThanOrEqual(strength(m));
    expect(head.view).toBe('gap');
    expect(head).toMatchObject({
      series_id: r.series_id,
      view: r.view,
      onset: r.onset,
      before: r.before,
      after: r.after,
      confidence: r.confidence,
    });
    // Each view's own evidence: onset near the change, its own levels and confidence.
    const byView = (v: string, service = 'shop') =>
      r.members.find((m) => m.view === v && m.service === service)!;
    for (const m of r.members) {
      expect(Math.abs(Date.parse(m.onset) - ONSET)).toBeLessThanOrEqual(3 * MIN);
      expect(m.confidence).toBeGreaterThan(0.9);
      expect(m.hosts.length).toBeGreaterThan(0);
    }
    const server = byView('server');
    expect(server.before.p50_ms).toBeGreaterThan(4);
    expect(server.before.p50_ms).toBeLessThan(6);
    expect(server.after.p50_ms).toBeGreaterThan(22);
    expect(server.after.p50_ms).toBeLessThan(28);
    const gap = byView('gap');
    expect(gap.before.p50_ms).toBeLessThan(1);
    expect(gap.after.p50_ms - gap.before.p50_ms).toBeGreaterThan(35);
    expect(gap.after.p50_ms - gap.before.p50_ms).toBeLessThan(45);
    const client = byView('client');
    expect(client.after.p50_ms - client.before.p50_ms).toBeGreaterThan(55);
    expect(client.after.p50_ms - client.before.p50_ms).toBeLessThan(70);
    expect(new Set(r.members.map((m) => m.series_id)).size).toBe(4);
  });

  it('three routes of one service stepping together are one regression listing each route; the flat route is not in it', () => {
    const api = of(first, 'api');
    expect(api.map((r) => `${r.view} ${r.name}`)).toHaveLength(1);
    const r = api[0]!;
    expect(r.members.map((m) => m.name).sort()).toEqual(['GET /a', 'GET /b', 'POST /c']);
    for (const m of r.members) {
      expect(m.service).toBe('api');
      expect(m.ratio_p50).toBeGreaterThan(2.5);
      expect(m.ratio_p50).toBeLessThan(3.5);
      expect([...m.hosts].sort()).toEqual(['api-1', 'api-2']);
    }
    expect(r.members.filter((m) => m.headline)).toHaveLength(1);
    expect(r.members[0]!.series_id).toBe(r.series_id);
  });

  it('two unrelated services stepping in the same minute stay two regressions', () => {
    const a = of(first, 'alpha');
    const b = of(first, 'beta');
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(a[0]!.id).not.toBe(b[0]!.id);
    expect(a[0]!.members.map((m) => m.name)).toEqual(['GET /alpha']);
    expect(b[0]!.members.map((m) => m.name)).toEqual(['GET /beta']);
    expect(Math.abs(Date.parse(a[0]!.onset) - Date.parse(b[0]!.onset))).toBeLessThanOrEqual(
      2 * MIN,
    );
  });

  it('a further step on a series of an open regression within 30 minutes grows it (a rollout’s second wave), it does not open another', () => {
    const cart = of(first, 'cart');
    expect(cart.map((r) => `${r.view} ${r.name} ${r.onset}`)).toHaveLength(1);
    const r = cart[0]!;
    expect(new Set(r.members.map((m) => m.series_id))).toEqual(new Set([r.series_id]));
    const onsets = r.members.map((m) => Date.parse(m.onset)).sort((a, b) => a - b);
    expect(onsets).toHaveLength(2);
    expect(Math.abs(onsets[0]! - (ONSET - 20 * MIN))).toBeLessThanOrEqual(3 * MIN);
    expect(Math.abs(onsets[1]! - ONSET)).toBeLessThanOrEqual(3 * MIN);
  });

  it('a rollout’s later wave 50 minutes after its canary joins the regression the canary opened, by its suspect: the same rollout', () => {
    const orders = of(first, 'orders');
    expect(orders.map((r) => `${r.name} ${r.onset}`)).toHaveLength(1);
    const r = orders[0]!;
    const onsets = r.members.map((m) => Date.parse(m.onset)).sort((a, b) => a - b);
    expect(new Set(r.members.map((m) => m.series_id))).toEqual(new Set([r.series_id]));
    expect(onsets).toHaveLength(2);
    expect(Math.abs(onsets[0]! - CANARY)).toBeLessThanOrEqual(3 * MIN);
    expect(Math.abs(onsets[1]! - ONSET)).toBeLessThanOrEqual(3 * MIN);
    expect(r.suspects[0]!.to_version).toBe('2.5.0');
    expect(new Set(r.suspects[0]!.deploy_ids)).toEqual(
      new Set([markerIds['orders canary'], markerIds['orders rest']]),
    );
  });

  it('two releases of one service 50 minutes apart stay two regressions, each with its own release', () => {
    const billing = of(first, 'billing').sort((a, b) => Date.parse(a.onset) - Date.parse(b.onset));
    expect(billing.map((r) => r.members.length)).toEqual([1, 1]);
    expect(Math.abs(Date.parse(billing[0]!.onset) - CANARY)).toBeLessThanOrEqual(3 * MIN);
    expect(Math.abs(Date.parse(billing[1]!.onset) - ONSET)).toBeLessThanOrEqual(3 * MIN);
    expect(billing.map((r) => r.suspects[0]?.deploy_id)).toEqual([
      markerIds['billing 3.1.0'],
      markerIds['billing 3.2.0'],
    ]);
  });

  it('nothing else regressed, and each regression paged exactly once', () => {
    expect(first.map((r) => r.service).sort()).toEqual([
      'alpha',
      'api',
      'beta',
      'billing',
      'billing',
      'cart',
      'jobs',
      'orders',
      'shop',
    ]);
    const paged = firingPerRegression();
    expect([...paged.keys()].sort()).toEqual(first.map((r) => r.id).sort());
    expect([...paged.values()]).toEqual(first.map(() => 1));
  });
});

describe('a member found in a later pass', () => {
  let later: Regression[] = [];
  let pass: { opened: number; grouped: number };
  beforeAll(async () => {
    // The `thumb` spawns' history arrives only now (a new series): the next pass finds the same step on it.
    const tr = new Traffic(5);
    spawns(tr, 'thumb', 50);
    // alpha's regression was marked resolved by a person; its second route's history arrives late too.
    const alpha = of(first, 'alpha')[0]!;
    expect((await A.post(`/api/v1/regressions/${alpha.id}/resolve`, { by: 'oncall' })).status).toBe(
      200,
    );
    each(FROM, END, 10, (t, after) =>
      tr.span(
        { 'service.name': 'alpha', 'host.name': 'alpha-1' },
        'GET',
        SpanKind.SERVER,
        t,
        tr.lognormal(after ? 30 : 10, 0.1),
        { 'http.request.method': 'GET', 'http.route': '/alpha-2' },
      ),
    );
    await tr.send(server.otlpUrl);
    pass = await detect();
    later = await regressions();
    await deliver();
  }, 180_000);

  it('joins the open regression of its incident instead of opening one, and heads it when it shows the step better', async () => {
    expect(pass).toMatchObject({ opened: 0, grouped: 2 });
    expect(later.map((r) => r.id).sort()).toEqual(first.map((r) => r.id).sort());
    const before = of(first, 'jobs')[0]!;
    const r = of(later, 'jobs')[0]!;
    expect(r.id).toBe(before.id);
    expect(before.members.map((m) => m.name)).toEqual(['resize']);
    // ×10 shows it better than ×3: thumb is the headline now, and the regression's fields are its.
    expect(r.members.map((m) => [m.name, m.headline])).toEqual([
      ['thumb', true],
      ['resize', false],
    ]);
    expect(r).toMatchObject({ name: 'thumb', series_id: r.members[0]!.series_id });
    expect(r.ratio_p50).toBeGreaterThan(8);
    expect(r.detected_at).toBe(before.detected_at);
    // Still the one alert of this regression; its details follow the new headline (its title keeps the words it paged with).
    const alerts = (await A.get(`/api/v1/alerts?regression_id=${r.id}`)).body.alerts as Array<{
      status: string;
      details: { ratio_p50: number; after: { p50_ms: number } };
    }>;
    expect(alerts.map((a) => a.status)).toEqual(['firing']);
    expect(alerts[0]!.details.ratio_p50).toBe(r.ratio_p50);
    expect(alerts[0]!.details.after.p50_ms).toBe(r.after.p50_ms);
  });

  it('joins a regression a person resolved (they know of the incident) without reopening or paging it', () => {
    const r = of(later, 'alpha');
    expect(r.map((x) => x.id)).toEqual([of(first, 'alpha')[0]!.id]);
    expect(r[0]!.status).toBe('resolved');
    expect(r[0]!.members.map((m) => m.name).sort()).toEqual(['GET /alpha', 'GET /alpha-2']);
  });

  it('does not page again', () => {
    const paged = firingPerRegression();
    expect([...paged.keys()].sort()).toEqual(first.map((r) => r.id).sort());
    expect([...paged.values()]).toEqual(first.map(() => 1));
  });
});
