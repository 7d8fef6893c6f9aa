/**
 * Replays of what the official zero-code instrumentations really sent (e2e/fixtures/sdk,
 * recorded from the real exporters): web (Python Flask + requests, old HTTP conventions, CLIENT
 * spans named `GET`) -> api (Go otelhttp, CLIENT `HTTP GET` to 127.0.0.1) -> store (Java agent
 * 2.x). Pair first, then classify: each caller series is the edge's client view, named after the
 * callee and with the callee's service as peer; no series is a bare method; each call counts
 * once, whichever order the services' bodies arrive in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Series } from '@onset/contract';
import { shiftMetricTimes, shiftSpanTimes } from '../apps/agent/test/live/helpers/test-time.ts';
import { Partitions } from '../apps/server/src/db/partitions.ts';
import { compactHistograms } from '../apps/server/src/otlp/compact.ts';
import { loadBodies, loadManifest, SDKS, type Sdk } from './fixtures/sdk/index.ts';

/** Trace bodies of every SDK, their times moved so the recording ends 10 minutes ago. */
function traceBodies(): Array<{ sdk: Sdk; body: Buffer }> {
  const recordedAt = Date.parse(loadManifest('python-requests').recordedAt);
  const shiftNs = BigInt(Date.now() - 10 * 60_000 - recordedAt) * 1_000_000n;
  const out: Array<{ sdk: Sdk; body: Buffer }> = [];
  for (const sdk of SDKS)
    for (const b of loadBodies(sdk).filter((x) => x.signal === 'traces')) {
      const body = Buffer.from(b.body);
      shiftSpanTimes(body, () => shiftNs);
      out.push({ sdk, body });
    }
  return out;
}

/** Every body of every SDK, traces and metrics in their recorded order, moved as traceBodies. */
function allBodies(): Array<{ sdk: Sdk; signal: 'traces' | 'metrics'; body: Buffer }> {
  const recordedAt = Date.parse(loadManifest('python-requests').recordedAt);
  const shiftNs = BigInt(Date.now() - 10 * 60_000 - recordedAt) * 1_000_000n;
  const out: Array<{ sdk: Sdk; signal: 'traces' | 'metrics'; body: Buffer }> = [];
  for (const sdk of SDKS)
    for (const b of loadBodies(sdk)) {
      if (b.signal === 'logs') continue;
      const body = Buffer.from(b.body);
      if (b.signal === 'traces') shiftSpanTimes(body, () => shiftNs);
      else shiftMetricTimes(body, (ns) => ns + shiftNs);
      out.push({ sdk, signal: b.signal, body });
    }
  return out;
}

async function send(server: TestServer, body: Buffer, signal: 'traces' | 'metrics' = 'traces') {
  const res = await fetch(`${server.otlpUrl}/v1/${signal}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: new Uint8Array(body),
  });
  expect(res.status).toBe(200);
}

async function seriesOf(server: TestServer, service: string): Promise<Series[]> {
  const res = await fetch(`${server.url}/api/v1/series?service=${service}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { series: Series[] }).series;
}

async function count(server: TestServer, s: Series): Promise<number> {
  const res = await fetch(
    `${server.url}/api/v1/series/${s.id}/quantiles?from=now-2h&step=1d&q=0.5`,
  );
  const body = (await res.json()) as { points: Array<{ count: number }> };
  return body.points.reduce((a, p) => a + p.count, 0);
}

const labels = (s: Series) => `${s.view} ${s.name} -> ${s.peer ?? ''}`;

const ORDERS: Record<string, <T>(b: T[]) => T[]> = {
  'as recorded (callers first)': (b) => b,
  'reversed (callees first, bodies backwards)': (b) => [...b].reverse(),
};

for (const [order, arrange] of Object.entries(ORDERS)) {
  describe(`recorded SDK spans replayed ${order}`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer();
    });
    afterAll(async () => {
      await server?.close();
    });

    it('pairs every call, names each caller series after its callee, and counts each call once', async () => {
      const m = loadManifest('python-requests');
      const checkouts = m.checkouts.before + m.checkouts.after;
      for (const b of arrange(traceBodies())) await send(server, b.body);
      const detect = await fetch(`${server.url}/api/v1/detect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(detect.status).toBeLessThan(300);

      const web = await seriesOf(server, 'web');
      const api = await seriesOf(server, 'api');
      const store = await seriesOf(server, 'store');
      for (const s of [...web, ...api, ...store]) {
        expect(s.name, labels(s)).not.toMatch(/^(HTTP )?[A-Z]+$/);
        // Once paired, the callee is its service.name, never the IP the SDK dialled.
        expect(s.peer, labels(s)).not.toBe('127.0.0.1');
      }
      // web's `requests` calls are the web -> api edge's client views, named by the Go routes.
      expect(web.filter((s) => s.view === 'client').map(labels)).toEqual([
        'client GET /items/{id} -> api',
        'client GET /quote/{id} -> api',
      ]);
      // Go's `HTTP GET` is the api -> store edge, named by the Java agent's route.
      expect(api.filter((s) => s.view === 'client').map(labels)).toEqual([
        'client GET /stock/ -> store',
      ]);
      const one = (list: Series[], l: string) => {
        const s = list.find((x) => labels(x) === l);
        expect(s, l).toBeDefined();
        return s!;
      };
      // One call of each per checkout: the caller's view, the gap and the callee's view agree.
      for (const view of ['client', 'gap', 'server'])
        for (const name of ['GET /items/{id}', 'GET /quote/{id}'])
          expect(await count(server, one(web, `${view} ${name} -> api`)), `${view} ${name}`).toBe(
            checkouts,
          );
      for (const view of ['client', 'gap', 'server'])
        expect(await count(server, one(api, `${view} GET /stock/ -> store`)), view).toBe(checkouts);
      expect(await count(server, one(api, 'server GET /items/{id} -> '))).toBe(checkouts);
      expect(await count(server, one(store, 'server GET /stock/ -> '))).toBe(checkouts);

      // The overview counts calls, not views: web served and made 3 calls per checkout.
      const arriving = (await (
        await fetch(`${server.url}/api/v1/arriving?from=now-1h`)
      ).json()) as { services: Array<{ service: string; calls: number }> };
      const calls = (s: string) => arriving.services.find((x) => x.service === s)?.calls;
      expect(calls('web')).toBe(3 * checkouts);
      expect(calls('api')).toBe(3 * checkouts);
      expect(calls('store')).toBe(checkouts);
    });
  });
}

for (const [order, arrange] of Object.entries(ORDERS)) {
  describe(`recorded SDK spans and metrics replayed ${order}`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer();
    });
    afterAll(async () => {
      await server?.close();
    });

    it('counts each call once: the SDKs’ HTTP metrics add no series and no calls beside the spans', async () => {
      const m = loadManifest('python-requests');
      const checkouts = m.checkouts.before + m.checkouts.after;
      for (const b of arrange(allBodies())) await send(server, b.body, b.signal);
      const detect = await fetch(`${server.url}/api/v1/detect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(detect.status).toBeLessThan(300);
      // Metric points that came before the spans of their calls are replaced by them here.
      await compactHistograms(
        server.onset.pool,
        new Partitions(server.onset.pool),
        Date.now() + 120_000,
      );

      const web = await seriesOf(server, 'web');
      const store = await seriesOf(server, 'store');
      // Python's http.server.duration (http.target '/checkout/<item>', no http.route) and
      // http.client.duration (no route at all) are no series of their own beside the spans'.
      expect(web.map(labels).sort()).toEqual([
        'client GET /items/{id} -> api',
        'client GET /quote/{id} -> api',
        'gap GET /items/{id} -> api',
        'gap GET /quote/{id} -> api',
        'server GET /checkout/<item> -> ',
        'server GET /items/{id} -> api',
        'server GET /quote/{id} -> api',
      ]);
      const one = (list: Series[], l: string) => {
        const s = list.find((x) => labels(x) === l);
        expect(s, l).toBeDefined();
        return s!;
      };
      const checkout = one(web, 'server GET /checkout/<item> -> ');
      expect(await count(server, checkout)).toBe(checkouts);
      // The series says its calls are the spans', the same calls' metrics not added.
      expect(checkout).toMatchObject({ calls_from: 'spans', metrics_not_counted: true });
      for (const name of ['GET /items/{id}', 'GET /quote/{id}'])
        expect(await count(server, one(web, `client ${name} -> api`)), name).toBe(checkouts);
      const stock = one(store, 'server GET /stock/ -> ');
      expect(await count(server, stock)).toBe(checkouts);
      expect(stock).toMatchObject({ calls_from: 'spans', metrics_not_counted: true });
      const search = (await (
        await fetch(`${server.url}/api/v1/series/options?service=web`)
      ).json()) as { names: { values: string[] } };
      expect(search.names.values).not.toContain('http.client.duration');
      expect(search.names.values).not.toContain('http.server.duration');
    });
  });
}
