/**
 * Deploy verdicts (issue 28) through a real server on embedded PostgreSQL:
 * OTLP from the official OTel SDK (backfilled timestamps), markers through
 * POST /api/v1/deploys, verdicts through GET /api/v1/deploys/{id}/verdict.
 * Each scenario has services and hosts of its own:
 *
 *   shop      a canary on 2 of 8 hosts makes GET /cart ×1.3 slower (GET /home unchanged)
 *   ledger    a harmless release (no hosts: before/after)
 *   feed      a fleet-wide diurnal rise; a canary on 2 of 6 hosts that changes nothing,
 *             and the same deploy posted without hosts (before/after, the drift guard)
 *   checkout → urlite   urlite bumps hyper: +40 ms in its callers' gap view only
 *   tiny      5 calls a minute
 *   disk-*    a kernel wave on 3 of 6 hosts: unmounts ×300 there
 *
 * and ?wait against the same server, with its bounds and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { EDGE, lookupCalls, sdkSink, Traffic } from '@onset/testkit/incidents';
import type { Verdict } from '@onset/contract';
import { api, startReceiver, type Receiver } from './slo-support.ts';
import { runVerdictAlertPass } from '../src/verdicts/tasks.ts';

const MIN = 60_000;
/** The markers' time: every scenario's data runs from T - 25 min to T + 15 min. */
const T = Math.floor(Date.now() / MIN) * MIN - 20 * MIN;
const FROM = T - 25 * MIN;
const TO = T + 15 * MIN;

const hosts = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
const SHOP = hosts('shop', 8);
const SHOP_CANARY = ['shop-7', 'shop-8'];
const LEDGER = hosts('ledger', 4);
const FEED = hosts('feed', 6);
const FEED_CANARY = ['feed-2', 'feed-5'];
const DISK = hosts('disk', 6);
const DISK_WAVE = ['disk-2', 'disk-4', 'disk-6'];
const KERNELS = ['6.5.0-44', '6.8.0-31'];

let srv: TestServer;
let A: ReturnType<typeof api>;
let slack: Receiver;
const ids: Record<string, string> = {};

async function marker(body: Record<string, unknown>): Promise<string> {
  const r = await A.post('/api/v1/deploys', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

async function verdict(id: string, query = ''): Promise<Verdict> {
  const r = await A.get(`/api/v1/deploys/${id}/verdict${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Verdict;
}

function send(tr: Traffic) {
  const server = (res: Record<string, string>, route: string, t: number, ms: number) =>
    tr.span(res, 'handle', SpanKind.SERVER, t, ms, {
      'http.request.method': 'GET',
      'http.route': route,
    });
  for (let m = FROM; m < TO; m += MIN) {
    const at = (i: number, n: number) => m + ((i + tr.rand()) * MIN) / n;
    const after = m >= T;
    for (const h of SHOP)
      for (let i = 0; i < 40; i++) {
        const slow = after && SHOP_CANARY.includes(h) ? 1.3 : 1;
        server(
          { 'service.name': 'shop', 'host.name': h },
          '/cart',
          at(i, 40),
          tr.lognormal(30, 0.25) * slow,
        );
        server(
          { 'service.name': 'shop', 'host.name': h },
          '/home',
          at(i, 40),
          tr.lognormal(12, 0.25),
        );
      }
    for (const h of LEDGER)
      for (let i = 0; i < 40; i++)
        server(
          { 'service.name': 'ledger', 'host.name': h },
          '/entries',
          at(i, 40),
          tr.lognormal(18, 0.3),
        );
    // Rising through the morning: +1.5 % a minute on every host.
    const diurnal = Math.pow(1.015, (m - FROM) / MIN);
    for (const h of FEED)
      for (let i = 0; i < 40; i++)
        server(
          { 'service.name': 'feed', 'host.name': h },
          '/timeline',
          at(i, 40),
          tr.lognormal(25, 0.25) * diurnal,
        );
    for (const pair of EDGE.pairs) lookupCalls(sdkSink(tr), tr.rand, pair, m, after, 40);
    for (let i = 0; i < 5; i++)
      server(
        { 'service.name': 'tiny', 'host.name': 'tiny-1' },
        '/ping',
        at(i, 5),
        tr.lognormal(5, 0.3),
      );
    for (const h of DISK) {
      const moved = after && DISK_WAVE.includes(h);
      const res = {
        'service.name': 'kubelet',
        'host.name': h,
        'os.version': KERNELS[moved ? 1 : 0]!,
      };
      for (let i = 0; i < 40; i++)
        tr.span(
          res,
          'unmount',
          SpanKind.INTERNAL,
          at(i, 40),
          moved ? 8000 + tr.rand() * 2000 : 14 + tr.rand() * 12,
          {
            'fs.mountpoint': '/var/lib/kubelet/pods',
            'fs.type': 'overlay',
          },
        );
    }
  }
}

beforeAll(async () => {
  // ledger has settings of its own (ONSET_VERDICT_SERVICES); every other service the defaults.
  srv = await startTestServer({
    env: { ONSET_VERDICT_SERVICES: '{"ledger": {"min_count": 200, "p99_ratio": 1.3}}' },
  });
  A = api(srv.url);
  slack = await startReceiver();
  expect((await A.post('/api/v1/webhooks', { url: slack.url, format: 'slack' })).status).toBe(201);
  const tr = new Traffic(20261201);
  send(tr);
  await tr.send(srv.otlpUrl);
  const iso = new Date(T).toISOString();
  ids.shop = await marker({
    service: 'shop',
    hosts: SHOP_CANARY,
    kind: 'code',
    from_version: '3.1.0',
    to_version: '3.2.0',
    at: iso,
  });
  ids.ledger = await marker({ service: 'ledger', kind: 'code', to_version: '9.0.1', at: iso });
  ids.feedCanary = await marker({
    service: 'feed',
    hosts: FEED_CANARY,
    kind: 'config',
    component: 'cache',
    at: iso,
  });
  ids.feedAll = await marker({ service: 'feed', kind: 'config', component: 'cache', at: iso });
  ids.urlite = await marker({
    service: EDGE.callee.service,
    hosts: EDGE.pairs.map((p) => p.callee),
    kind: 'dependency',
    component: 'hyper',
    from_version: EDGE.hyper[0],
    to_version: EDGE.hyper[1],
    at: iso,
  });
  ids.tiny = await marker({ service: 'tiny', kind: 'code', at: iso });
  ids.kernel = await marker({
    hosts: DISK_WAVE,
    kind: 'kernel',
    from_version: KERNELS[0],
    to_version: KERNELS[1],
    at: iso,
  });
}, 180_000);

afterAll(async () => {
  await srv?.close();
  await slack?.close();
});

const rowsOf = (v: Verdict, verdict: string) => v.series.filter((s) => s.verdict === verdict);

describe('?wait', () => {
  it('holds the request until the verdict is decided, without holding a database connection', async () => {
    // Runs first: the dependency bump's edge views are not paired yet (no detection pass has run),
    // so its verdict is pending until a pass pairs them.
    expect((await verdict(ids.urlite!)).verdict).toBe('pending');
    // More waiting requests than the server's 20 database connections.
    const started = Date.now();
    const waits = Array.from({ length: 30 }, () => verdict(ids.urlite!, '?wait=60s'));
    let settled = 0;
    waits.forEach((w) => w.then(() => settled++));
    await new Promise((r) => setTimeout(r, 1500));
    expect(settled).toBe(0);
    // The server still answers other requests meanwhile.
    expect((await A.get(`/api/v1/deploys/${ids.urlite}`)).status).toBe(200);
    expect((await A.get(`/api/v1/deploys/${ids.ledger}/verdict`)).status).toBe(200);
    expect(settled).toBe(0);
    expect((await A.post('/api/v1/detect', { upto: new Date(TO).toISOString() })).status).toBe(200);
    const answers = await Promise.all(waits);
    for (const a of answers) expect(a.verdict).toBe('fail');
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it('answers pending when the wait ends first', async () => {
    const id = await marker({
      service: 'ledger',
      kind: 'config',
      at: new Date(Date.now() - MIN).toISOString(),
    });
    const t0 = Date.now();
    const v = await verdict(id, '?wait=2s');
    expect(v.verdict).toBe('pending');
    expect(v.decided_at).toBeNull();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(v.reason).toMatch(/^judging: [01] of 10 minutes of the window settled/);
  });

  it('refuses bad durations with a 400 naming the field', async () => {
    for (const [q, msg] of [
      ['?wait=16m', /^wait: at most 15m/],
      ['?wait=soon', /wait/],
      ['?wait=-5s', /wait/],
      ['?window=30s', /^window: 1m to 2h/],
      ['?window=90s', /^window: whole minutes/],
      ['?window=3h', /^window: 1m to 2h/],
      ['?p50_ratio=0.5', /p50_ratio/],
      ['?min_count=0', /min_count/],
    ] as const) {
      const r = await A.get(`/api/v1/deploys/${ids.ledger}/verdict${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.message, q).toMatch(msg);
    }
    expect((await A.get('/api/v1/deploys/999999/verdict')).status).toBe(404);
    expect((await A.get('/api/v1/deploys/abc/verdict')).status).toBe(404);
  });
});

describe('deploy verdicts', () => {
  it('a canary on 2 of 8 hosts that makes one route ×1.3 slower fails within 10 minutes, naming that route', async () => {
    const v = await verdict(ids.shop!);
    expect(v).toMatchObject({
      deploy_id: ids.shop,
      verdict: 'fail',
      method: 'canary',
      canary_hosts: SHOP_CANARY,
      baseline_hosts: SHOP.filter((h) => !SHOP_CANARY.includes(h)),
      thresholds: { p50_ratio: 1.1, p99_ratio: 1.2, min_count: 300, window_ms: 10 * MIN },
    });
    expect(Date.parse(v.decided_at!) - T).toBeLessThanOrEqual(10 * MIN);
    // 80 calls a minute on the canary: the 4th minute's look has the 300 it needs.
    expect(v.decided_at).toBe(new Date(T + 4 * MIN + 20_000).toISOString());
    const failed = rowsOf(v, 'fail');
    expect(failed.map((s) => s.name)).toEqual(['GET /cart']);
    const cart = failed[0]!;
    expect(cart).toMatchObject({ service: 'shop', view: 'server', role: 'service' });
    expect(cart.p50_ratio.value).toBeGreaterThan(1.2);
    expect(cart.p50_ratio.value).toBeLessThan(1.4);
    expect(cart.p50_ratio.low).toBeGreaterThan(1.1);
    expect(cart.p_value).toBeLessThan(0.001);
    expect(cart.candidate.count).toBeGreaterThanOrEqual(300);
    expect(cart.candidate.p50! / cart.baseline.p50!).toBeCloseTo(cart.p50_ratio.value!, 1);
    expect(v.reason).toMatch(/^shop GET \/cart \(server\): p50 ×1\.[23]/);
    expect(v.series.find((s) => s.name === 'GET /home')!.verdict).not.toBe('fail');
    expect(v.windows.baseline).toEqual(v.windows.candidate);
  });

  it('the failed verdict is an alert; Slack says which series and by how much', async () => {
    const alerts = await A.get('/api/v1/alerts?type=deploy_verdict');
    expect(alerts.status).toBe(200);
    const mine = alerts.body.alerts.filter(
      (a: { details: { deploy_id: string } }) => a.details.deploy_id === ids.shop,
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      type: 'deploy_verdict',
      severity: 'ticket',
      status: 'firing',
      service: 'shop',
    });
    expect(mine[0].text.lines[0].label).toBe('shop GET /cart (server)');
    expect(mine[0].text.lines[0].text).toMatch(/^p50 ×1\.[23]\d*, p99 ×[\d.]+: p50 ×/);
    expect(mine[0].text.cause).toBe(`shop code 3.1.0 → 3.2.0 (deploy ${ids.shop}, canary)`);
    // Asking again raises nothing new.
    await verdict(ids.shop!);
    expect((await A.post('/api/v1/slos/evaluate')).status).toBe(200);
    const texts = slack.requests.map((r) => String(r.json?.text ?? ''));
    const about = texts.filter((t) => t.includes(`deploy ${ids.shop}`));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatch(
      /shop GET \/cart \(server\) p50 ×1\.[23]\d*, p99 ×[\d.]+ on the canary hosts \(shop-7, shop-8\)/,
    );
  });

  it('the verdict_alerts job raises the alert of a failing marker nobody asked about, and resolves it when the marker is gone', async () => {
    const unasked = await marker({
      hosts: DISK_WAVE,
      kind: 'kernel',
      from_version: KERNELS[0],
      to_version: KERNELS[1],
      at: new Date(T).toISOString(),
    });
    const ofIt = async () =>
      (await A.get('/api/v1/alerts?type=deploy_verdict')).body.alerts.filter(
        (a: { details: { deploy_id: string } }) => a.details.deploy_id === unasked,
      );
    expect(await ofIt()).toHaveLength(0);
    const first = await runVerdictAlertPass(srv.onset.pool, srv.onset.config);
    expect(first.raised).toBeGreaterThanOrEqual(1);
    expect((await ofIt()).map((a: { status: string }) => a.status)).toEqual(['firing']);
    // Only posted markers are alerted: the ones inferred from telemetry (urlite's versions, the
    // disks' kernel) repeat them.
    const posted = new Set([...Object.values(ids), unasked]);
    const alerted = (await A.get('/api/v1/alerts?type=deploy_verdict')).body.alerts.map(
      (a: { details: { deploy_id: string } }) => a.details.deploy_id,
    );
    expect(alerted.filter((id: string) => !posted.has(id))).toEqual([]);
    // Once per marker: the next pass raises nothing.
    expect((await runVerdictAlertPass(srv.onset.pool, srv.onset.config)).raised).toBe(0);
    expect((await A.del(`/api/v1/deploys/${unasked}`)).status).toBe(204);
    expect(
      (await runVerdictAlertPass(srv.onset.pool, srv.onset.config)).resolved,
    ).toBeGreaterThanOrEqual(1);
    expect((await ofIt()).map((a: { status: string }) => a.status)).toEqual(['resolved']);
  });

  it('a harmless deploy passes', async () => {
    const v = await verdict(ids.ledger!);
    expect(v).toMatchObject({ verdict: 'pass', method: 'before_after', canary_hosts: [] });
    expect(v.thresholds).toMatchObject({ p50_ratio: 1.1, p99_ratio: 1.3, min_count: 200 });
    expect(v.decided_at).toBe(new Date(T + 10 * MIN + 20_000).toISOString());
    expect(v.series.map((s) => [s.name, s.verdict])).toEqual([['GET /entries', 'pass']]);
    expect(v.series[0]!.baseline.count).toBeGreaterThanOrEqual(1500);
    expect(v.windows.drift_guard).toEqual({
      from: new Date(T - 20 * MIN).toISOString(),
      to: new Date(T - 10 * MIN).toISOString(),
    });
  });

  it('a deploy during a fleet-wide diurnal rise passes by the canary method; before/after sees the rise and does not fail it', async () => {
    const canary = await verdict(ids.feedCanary!);
    expect(canary).toMatchObject({ verdict: 'pass', method: 'canary', canary_hosts: FEED_CANARY });
    const all = await verdict(ids.feedAll!);
    expect(all.method).toBe('before_after');
    // The window after is ×1.16 the one before, but so was the one before that.
    expect(all.series[0]!.p50_ratio.value).toBeGreaterThan(1.1);
    expect(all).toMatchObject({ verdict: 'inconclusive' });
    expect(all.series[0]!.reason).toMatch(
      /already rising before the deploy \(p50 ×1\.\d+ over the window before\)/,
    );
  });

  it('a dependency bump that adds ~40 ms only to its callers fails on the gap view of that edge', async () => {
    // The gap view exists once edges are paired (a detection pass; ?wait above ran one too).
    expect((await A.post('/api/v1/detect', { upto: new Date(TO).toISOString() })).status).toBe(200);
    const v = await verdict(ids.urlite!);
    expect(v.verdict).toBe('fail');
    const gap = v.series.find((s) => s.view === 'gap')!;
    expect(gap).toMatchObject({
      service: 'checkout',
      peer: 'urlite',
      name: 'GET /lookup',
      role: 'caller',
      verdict: 'fail',
    });
    expect(gap.candidate.p50! - gap.baseline.p50!).toBeGreaterThan(35);
    expect(gap.candidate.p50! - gap.baseline.p50!).toBeLessThan(45);
    // The callee's own server view is flat.
    const own = v.series.find((s) => s.service === 'urlite' && s.view === 'server')!;
    expect(own).toMatchObject({
      role: 'service',
      verdict: 'fail' === own?.verdict ? 'never' : own.verdict,
    });
    expect(own.verdict).not.toBe('fail');
    expect(own.p50_ratio.value).toBeLessThan(1.1);
  });

  it('a service with 5 calls a minute is inconclusive, never pass', async () => {
    const v = await verdict(ids.tiny!);
    expect(v.verdict).toBe('inconclusive');
    expect(v.reason).toMatch(
      /^no series had enough calls: tiny GET \/ping \(server\): too few calls to judge: 50 calls after the deploy, 50 before it \(300 needed a side\)$/,
    );
    // Lower the minimum for this request and the same data is judged.
    const judged = await verdict(ids.tiny!, '?min_count=40');
    expect(judged.thresholds.min_count).toBe(40);
    expect(judged.verdict).toBe('pass');
  });

  it('a kernel wave on 3 of 6 hosts with slower unmounts fails with those hosts as the canary', async () => {
    const v = await verdict(ids.kernel!);
    expect(v).toMatchObject({
      verdict: 'fail',
      method: 'canary',
      canary_hosts: DISK_WAVE,
      baseline_hosts: ['disk-1', 'disk-3', 'disk-5'],
    });
    expect(v.series[0]).toMatchObject({
      service: 'kubelet',
      op: 'unmount',
      name: '/var/lib/kubelet/pods',
      role: 'host',
      verdict: 'fail',
    });
    expect(v.series[0]!.p50_ratio.value).toBeGreaterThan(200);
    expect(Date.parse(v.decided_at!) - T).toBeLessThanOrEqual(4 * MIN);
  });

  it('thresholds per request: a ×1.3 canary passes when the request allows ×1.5', async () => {
    const v = await verdict(ids.shop!, '?p50_ratio=1.5&p99_ratio=1.5');
    expect(v.verdict).toBe('pass');
    expect(v.thresholds).toMatchObject({ p50_ratio: 1.5, p99_ratio: 1.5 });
  });
});
