/**
 * A gap the caller does not feel (docs/regressions.md), through a real server
 * on embedded PostgreSQL with traffic from the official OTel SDK. Two edges
 * whose gaps step at the same minute with no deploy: on one, a fifth of the
 * calls wait 1.5 ms more between the caller and the callee's handler (the
 * caller's machine waking it later), so the gap's p99 doubles while the
 * caller's own latency (10 ms calls) moves ×1.1 at most; on the other every
 * call pays +3 ms on 2 ms calls, which the caller feels (×2.5). Only the felt
 * one opens a regression; the other is context, counted as held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const ONSET = END - 30 * MIN;
const FROM = ONSET - 180 * MIN;

let server: TestServer;
let A: ReturnType<typeof api>;
let regressions: Regression[] = [];
let metrics = '';

/** Calls from `caller` to `callee`'s route, every 2 s: the callee's handling and the wait around it. */
function edge(
  tr: Traffic,
  caller: string,
  callee: string,
  route: string,
  serverMs: () => number,
  waitMs: (after: boolean) => number,
) {
  for (let t = FROM; t < END; t += 2_000) {
    const handling = serverMs();
    const wait = waitMs(t >= ONSET);
    const call = tr.span(
      { 'service.name': caller, 'host.name': `${caller}-1` },
      'GET',
      SpanKind.CLIENT,
      t,
      handling + wait,
      {
        'http.request.method': 'GET',
        'url.full': `http://${callee}:8080${route.replace('{id}', '7')}`,
        'server.address': callee,
        'peer.service': callee,
      },
    );
    tr.span(
      { 'service.name': callee, 'host.name': `${callee}-1` },
      `GET ${route}`,
      SpanKind.SERVER,
      t + wait / 2,
      handling,
      { 'http.request.method': 'GET', 'http.route': route },
      call,
    );
  }
}

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(11);
  // Unfelt: a fifth of web's calls to the api are woken 1.5 ms later; its calls take ~10 ms.
  edge(
    tr,
    'web',
    'api',
    '/quote/{id}',
    () => tr.lognormal(10, 0.1),
    (after) => 0.3 + tr.rand() * 0.1 + (after && tr.rand() < 0.2 ? 1.5 + tr.rand() * 0.2 : 0),
  );
  // Felt: every call of the shop to the lookup service pays 3 ms more on 2 ms calls.
  edge(
    tr,
    'shop',
    'lookup',
    '/resolve/{id}',
    () => tr.lognormal(2, 0.1),
    (after) => 0.3 + tr.rand() * 0.1 + (after ? 3 : 0),
  );
  await tr.send(server.otlpUrl);
  const res = await A.post('/api/v1/detect', { upto: new Date(END).toISOString() });
  expect(res.status, res.text).toBe(200);
  const list = await A.get('/api/v1/regressions');
  expect(list.status).toBe(200);
  regressions = list.body.regressions as Regression[];
  metrics = await (await fetch(`${server.url}/metrics`)).text();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

const labels = () =>
  regressions.map((r) => `${r.service} ${r.view} ${r.name} -> ${r.peer}`).join('; ');

describe('a gap view’s step', () => {
  it('the caller feels opens one regression with the edge’s views', () => {
    const shop = regressions.filter((r) => r.service === 'shop');
    expect(shop, labels()).toHaveLength(1);
    const views = shop[0]!.members.map((m) => m.view).sort();
    expect(views, labels()).toEqual(expect.arrayContaining(['client', 'gap']));
  });

  it('the caller does not feel opens nothing (its p99 doubled; the caller’s calls moved ×1.1 at most)', async () => {
    expect(
      regressions.filter((r) => r.service === 'web' || r.service === 'api'),
      labels(),
    ).toEqual([]);
    // The gap did step (its p99 doubled) and the caller's calls hardly moved: what the rule read.
    const p99 = async (view: string, fromMs: number, toMs: number) => {
      const list = await A.get(`/api/v1/series?service=web&view=${view}`);
      expect(list.status).toBe(200);
      expect(list.body.series.map((x: { name: string }) => x.name)).toEqual(['GET /quote/{id}']);
      const q = await A.get(
        `/api/v1/series/${list.body.series[0].id}/quantiles?from=${new Date(fromMs).toISOString()}&to=${new Date(toMs).toISOString()}&step=1m&q=0.99`,
      );
      expect(q.status, q.text).toBe(200);
      const v = (q.body.points as Array<{ q: Record<string, number> }>)
        .map((p) => p.q['0.99']!)
        .sort((a, b) => a - b);
      return v[v.length >> 1]!;
    };
    const rise = async (view: string) =>
      (await p99(view, ONSET, END)) / (await p99(view, ONSET - 60 * MIN, ONSET));
    expect(await rise('gap')).toBeGreaterThan(1.8);
    expect(await rise('client')).toBeLessThan(1.15);
  });

  it('is counted as held, with its reason, in the server’s metrics', () => {
    expect(metrics).toMatch(
      /onset_regressions_held_total\{[^}]*reason="gap_not_felt_by_caller"[^}]*\} [1-9]/,
    );
  });
});
