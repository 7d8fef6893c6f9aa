/**
 * Grouping whatever the order steps are found in (docs/regressions.md "One incident, one
 * regression"), through a real server on embedded PostgreSQL with traffic from the official OTel
 * SDK, and Onset's own noise kept out (docs/regressions.md "Onset's own noise").
 *
 * Merge: a callee (stock) goes ×3 and its caller's route (shop GET /checkout) with it. The series'
 * histories arrive one pass apart: the caller's route first (a regression with no suspect, paged),
 * then the callee's server view (a second regression, the stock marker its suspect: nothing relates
 * the two series yet), then the caller's client view of the edge, which is both the callee's edge
 * and the caller's service: the two regressions turn out to be one incident and are merged into the
 * older, headed by the callee's ×3 with the callee's marker first, its alert re-rendered; the other
 * is closed as merged, visible as such, its alert resolved.
 *
 * Own noise: at one onset, the agent's mount probe (spans marked onset.source=probe) and a program
 * reported under the agent's own service name step, and so do Onset's own embedded PostgreSQL's
 * WAL fsyncs (under <ONSET_DATA_DIR>/pg) and a user's PostgreSQL's. Four regressions: the probe and
 * Onset's database ones alone, marked as Onset's own, never alerted; the program's and the user's
 * database's alerted as usual.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, type Span } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Alert, Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const ONSET = END - 40 * MIN;
const FROM = ONSET - 180 * MIN;

let server: TestServer;
let A: ReturnType<typeof api>;
const passes: Array<{ opened: number; grouped: number; merged?: number }> = [];
const seen: Regression[][] = [];
let stockMarker = '';

async function detect() {
  const res = await A.post('/api/v1/detect', { upto: new Date(END).toISOString() });
  expect(res.status, res.text).toBe(200);
  passes.push(res.body.detection.regressions);
}

async function regressions(): Promise<Regression[]> {
  const res = await A.get('/api/v1/regressions?merged=true');
  expect(res.status).toBe(200);
  return res.body.regressions as Regression[];
}

async function alertsOf(id: string): Promise<Alert[]> {
  const res = await A.get(`/api/v1/alerts?regression_id=${id}`);
  expect(res.status).toBe(200);
  return res.body.alerts as Alert[];
}

function each(from: number, to: number, n: number, fn: (startMs: number, after: boolean) => void) {
  for (let m = from; m < to; m += MIN)
    for (let i = 0; i < n; i++) fn(m + ((i + 0.5) * MIN) / n, m >= ONSET);
}

const shop = { 'service.name': 'shop', 'host.name': 'shop-1' };
const stock = { 'service.name': 'stock', 'host.name': 'stock-1' };

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const routes = new Traffic(11);
  const callee = new Traffic(12);
  const callers = new Traffic(13);
  // Each call: shop's route (10 ms of its own) calls stock GET /items (5 → 15 ms).
  each(FROM, END, 20, (t, after) => {
    const serverMs = routes.lognormal(after ? 15 : 5, 0.08);
    const netMs = 0.3 + routes.rand() * 0.1;
    const ownMs = routes.lognormal(10, 0.05);
    routes.span(shop, 'GET /checkout', SpanKind.SERVER, t, ownMs + serverMs + netMs, {
      'http.request.method': 'GET',
      'http.route': '/checkout',
    });
    const client: Span = callers.span(shop, 'GET', SpanKind.CLIENT, t, serverMs + netMs, {
      'http.request.method': 'GET',
      'http.route': '/items',
      'peer.service': 'stock',
      'server.address': 'stock',
    });
    callee.span(
      stock,
      'GET',
      SpanKind.SERVER,
      t + netMs / 2,
      serverMs,
      { 'http.request.method': 'GET', 'http.route': '/items' },
      client,
    );
  });
  const marker = await A.post('/api/v1/deploys', {
    service: 'stock',
    kind: 'dependency',
    from_version: '2.0.1',
    to_version: '2.1.0',
    at: new Date(ONSET + MIN).toISOString(),
  });
  expect(marker.status, marker.text).toBe(201);
  stockMarker = marker.body.id;
  // The route's history, then the callee's, then the caller's calls: one pass after each.
  for (const tr of [routes, callee, callers]) {
    await tr.send(server.otlpUrl);
    await detect();
    seen.push(await regressions());
  }
}, 240_000);

afterAll(async () => {
  await server?.close();
});

const label = (r: Regression) =>
  `#${r.id} ${r.service} ${r.view} ${r.name} [${r.members.map((m) => `${m.service} ${m.view} ${m.name} ×${m.ratio_p50}/${m.ratio_p99}${m.headline ? ' (headline)' : ''}`).join('; ')}]${r.merged_into ? ` merged into ${r.merged_into}` : ''}`;

describe('regressions found apart that turn out to be one incident', () => {
  it('are two while nothing relates their series', () => {
    expect(seen[0]!.map((r) => r.service)).toEqual(['shop']);
    expect(seen[1]!.map((r) => r.service).sort()).toEqual(['shop', 'stock']);
    expect(seen[0]![0]!.suspects).toEqual([]);
  });

  it('merge into the older one once a step links them, headed by the callee with its marker first', () => {
    const all = seen[2]!;
    const shown = all.map(label).join('\n');
    const older = seen[0]![0]!;
    const live = all.filter((r) => !r.merged_into);
    expect(
      live.map((r) => r.id),
      shown,
    ).toEqual([older.id]);
    const r = live[0]!;
    expect(r.status).toBe('open');
    // Headed by the callee's ×3 (its server view, the callee's own series or the edge's), so
    // attributed to the callee's marker.
    expect(r, shown).toMatchObject({ view: 'server', name: 'GET /items' });
    expect([r.service, r.peer], shown).toContain('stock');
    expect(r.suspects[0]?.deploy_id, shown).toBe(stockMarker);
    expect(r.members[0], shown).toMatchObject({ series_id: r.series_id, headline: true });
    const names = r.members.map((m) => `${m.service} ${m.view} ${m.name}`);
    expect(names, shown).toEqual(expect.arrayContaining(['shop server GET /checkout']));
    expect(
      names.some((n) => n.startsWith('shop client')),
      shown,
    ).toBe(true);
    expect(passes[2]!.merged, JSON.stringify(passes)).toBe(1);
  });

  it('close the merged one as merged, its alert resolved; the survivor’s alert is re-rendered, never paged twice', async () => {
    const all = seen[2]!;
    const merged = all.filter((r) => r.merged_into);
    expect(merged.length, all.map(label).join('\n')).toBe(1);
    const m = merged[0]!;
    expect(m.merged_into).toBe(seen[0]![0]!.id);
    expect(m).toMatchObject({ status: 'resolved', resolved_by: 'onset', members: [] });
    expect(m.resolution).toContain(`merged into regression ${m.merged_into}`);
    const mAlerts = await alertsOf(m.id);
    expect(mAlerts.map((a) => a.status)).toEqual(['resolved']);
    // The survivor paged once (as shop's route, no suspect); its one alert now reads as the incident.
    const survivor = all.find((r) => r.id === m.merged_into)!;
    const sAlerts = await alertsOf(survivor.id);
    expect(sAlerts.map((a) => a.status)).toEqual(['firing']);
    const a = sAlerts[0]!;
    expect(a).toMatchObject({
      service: survivor.service,
      view: 'server',
      series_name: 'GET /items',
    });
    expect((a.details as { suspect?: { deploy_id: string } }).suspect?.deploy_id).toBe(stockMarker);
    expect(a.title).toContain('GET /items');
    expect(a.title).not.toContain('/checkout');
    expect(JSON.stringify(a.text)).not.toContain('/checkout');
    expect(JSON.stringify(a.text)).toContain('2.1.0');
  });

  it('is listed once; the merged one only on asking, and by its id', async () => {
    const m = seen[2]!.find((r) => r.merged_into)!;
    const listed = (await A.get('/api/v1/regressions')).body.regressions as Regression[];
    expect(listed.map((r) => r.id)).not.toContain(m.id);
    expect(listed.map((r) => r.id)).toContain(m.merged_into);
    const one = await A.get(`/api/v1/regressions/${m.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: m.id, merged_into: m.merged_into, status: 'resolved' });
  });

  it('a merged regression cannot be reopened (its survivor is the incident)', async () => {
    const m = seen[2]!.find((r) => r.merged_into)!;
    const res = await A.post(`/api/v1/regressions/${m.id}/reopen`, { by: 'oncall' });
    expect(res.status).toBe(409);
    expect(res.text).toContain(`merged into regression ${m.merged_into}`);
  });
});

describe("Onset's own noise", () => {
  let all: Regression[] = [];
  const agent = { 'service.name': 'onset-agent', 'host.name': 'box-1' };
  const ownWal = path.join(path.resolve('.onset'), 'pg', 'pg_wal');
  beforeAll(async () => {
    const tr = new Traffic(21);
    const T = END - 25 * MIN;
    const per = (fn: (t: number, after: boolean) => void) =>
      each(FROM, END, 10, (t) => fn(t, t >= T));
    // The agent's mount probe: an overlay unmount, marked as the agent's probe.
    per((t, after) =>
      tr.span(agent, 'umount', SpanKind.INTERNAL, t, tr.lognormal(after ? 60 : 15, 0.08), {
        'onset.op': 'unmount',
        'onset.source': 'probe',
        'onset.probe': 'mount',
        'fs.mountpoint': '/var/tmp/onset-agent/mount/overlay',
        'fs.type': 'overlay',
      }),
    );
    // A program reported under the agent's own name (an agent with a filter): not the agent's noise.
    per((t, after) =>
      tr.span(agent, 'process.spawn', SpanKind.INTERNAL, t, tr.lognormal(after ? 20 : 5, 0.08), {
        'onset.op': 'spawn',
        'onset.source': 'bpftrace',
        'process.executable.name': 'tar',
      }),
    );
    // Onset's own embedded PostgreSQL's WAL, and a user's PostgreSQL's, both under `postgres`.
    for (const dir of [ownWal, '/var/lib/postgresql/15/main/pg_wal'])
      per((t, after) =>
        tr.span(
          { 'service.name': 'postgres', 'host.name': 'box-1' },
          'fsync',
          SpanKind.INTERNAL,
          t,
          tr.lognormal(after ? 8 : 2, 0.08),
          { 'onset.op': 'fsync', 'onset.source': 'bpftrace', 'file.directory': dir },
        ),
      );
    await tr.send(server.otlpUrl);
    await detect();
    all = (await regressions()).filter((r) => ['onset-agent', 'postgres'].includes(r.service));
  }, 180_000);

  it('never joins another incident, nor another joins it', () => {
    const shown = all.map(label).join('\n');
    expect(all.length, shown).toBe(4);
    for (const r of all) expect(r.members.length, shown).toBe(1);
    const byName = new Map(all.map((r) => [r.name, r]));
    expect(byName.get('/var/tmp/onset-agent/mount/overlay')?.own, shown).toBe('agent-probe');
    expect(byName.get(ownWal)?.own, shown).toBe('onset-database');
    expect(byName.get('tar')?.own ?? null, shown).toBeNull();
    expect(byName.get('/var/lib/postgresql/15/main/pg_wal')?.own ?? null, shown).toBeNull();
  });

  it('never pages; the others do', async () => {
    for (const r of all) {
      const alerts = await alertsOf(r.id);
      expect(
        alerts.map((a) => a.status),
        label(r),
      ).toEqual(r.own ? [] : ['firing']);
    }
  });
});
