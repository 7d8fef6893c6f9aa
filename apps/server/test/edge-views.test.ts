/**
 * GET /api/v1/series/{id}/edge on a real server: real OTLP client and server
 * spans, paired by the server, then the client/server/gap views of the edge
 * found from any of its series, with their medians around an onset and the
 * verdict that only callers see a +40 ms gap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { pairEdges } from '../src/edges/pairing.ts';
import { Registry } from '../src/otlp/registry.ts';
import { Partitions } from '../src/db/partitions.ts';

let server: TestServer;
const MIN = 60_000;
const T0 = Math.floor(Date.now() / MIN) * MIN - 40 * MIN;
const ONSET = T0 + 20 * MIN;
const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

async function send(service: string, spans: object[]) {
  const res = await fetch(`${server.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      resourceSpans: [
        {
          resource: {
            attributes: [str('service.name', service), str('host.name', `${service}-1`)],
          },
          scopeSpans: [{ spans }],
        },
      ],
    }),
  });
  expect(res.status).toBe(200);
}

interface Series {
  id: string;
  service: string;
  view: string;
  name: string;
  peer: string | null;
}
const seriesOf = async (service: string) =>
  (
    (await (await fetch(`${server.url}/api/v1/series?service=${service}`)).json()) as {
      series: Series[];
    }
  ).series;
const edge = async (id: string, q = '') => {
  const r = await fetch(`${server.url}/api/v1/series/${id}/edge?from=now-1h&step=1m${q}`);
  return { status: r.status, body: (await r.json()) as any };
};

beforeAll(async () => {
  server = await startTestServer();
  // One call every 20 s for 40 minutes; after the onset the caller sees +40 ms the server does not.
  const client: object[] = [];
  const callee: object[] = [];
  for (let i = 0; i < 120; i++) {
    const startMs = T0 + i * 20_000;
    const start = BigInt(startMs) * 1_000_000n;
    const serverUs = 900n;
    const gapUs = startMs >= ONSET ? 40_000n : 500n;
    client.push({
      traceId: hex(i + 1, 32),
      spanId: hex(i + 1, 16),
      name: 'GET',
      kind: 3,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + (serverUs + gapUs) * 1000n),
      attributes: [str('http.request.method', 'GET'), str('peer.service', 'urlite')],
    });
    callee.push({
      traceId: hex(i + 1, 32),
      spanId: hex(1000 + i, 16),
      parentSpanId: hex(i + 1, 16),
      name: 'GET /lookup',
      kind: 2,
      startTimeUnixNano: String(start + 100_000n),
      endTimeUnixNano: String(start + 100_000n + serverUs * 1000n),
      attributes: [str('http.request.method', 'GET'), str('http.route', '/lookup')],
    });
  }
  await send('urlite', callee);
  await send('checkout', client);
  const pool = server.onset.pool;
  const paired = await pairEdges(pool, new Registry(pool), new Partitions(pool), {
    uptoMs: Date.now() + 1000,
  });
  expect(paired.pairs).toBe(120);
}, 120_000);
afterAll(() => server?.close());

describe('edge views from the server', () => {
  it('finds the same client, server and gap series from any view of the edge', async () => {
    const caller = (await seriesOf('checkout')).filter(
      (s) => s.peer === 'urlite' && s.name === 'GET /lookup',
    );
    const byView = Object.fromEntries(caller.map((s) => [s.view, s.id]));
    expect(Object.keys(byView).sort()).toEqual(['client', 'gap', 'server']);
    const calleeOwn = (await seriesOf('urlite')).find(
      (s) => s.view === 'server' && s.name === 'GET /lookup',
    )!;
    for (const from of [byView.client, byView.gap, byView.server, calleeOwn.id]) {
      const { status, body } = await edge(from!);
      expect(status).toBe(200);
      expect(body.caller).toBe('checkout');
      expect(body.callee).toBe('urlite');
      expect(body.views.map((v: any) => [v.view, v.series?.id])).toEqual([
        ['client', byView.client],
        ['server', byView.server],
        ['gap', byView.gap],
      ]);
    }
  });

  it('summarises each view around the onset and says only callers see it', async () => {
    const gapId = (await seriesOf('checkout')).find((s) => s.view === 'gap')!.id;
    const { body } = await edge(gapId, `&onset=${new Date(ONSET).toISOString()}&q=0.5`);
    const v = Object.fromEntries(body.views.map((x: any) => [x.view, x]));
    expect(v.gap.columns.t.length).toBeGreaterThan(30);
    expect(v.gap.summary['0.5'].before_ms).toBeLessThan(1);
    expect(v.gap.summary['0.5'].after_ms).toBeGreaterThan(39);
    expect(v.server.summary['0.5'].after_ms).toBeLessThan(1.1);
    expect(v.server.summary['0.5'].before_ms).toBeLessThan(1.1);
    expect(body.verdict['0.5']).toMatch(/^Only callers see it/);
    // Without an onset: medians over the range only, no verdict.
    const plain = await edge(gapId, '&q=0.5');
    expect(plain.body.views[2].summary['0.5'].before_ms).toBeNull();
    expect(plain.body.views[2].summary['0.5'].typical_ms).toBeGreaterThan(0);
    expect(plain.body.verdict['0.5']).toBeNull();
  });

  it('answers a series off any edge with empty views, and 4xx for bad input', async () => {
    await send('batch', [
      {
        traceId: hex(5000, 32),
        spanId: hex(5000, 16),
        name: 'nightly',
        kind: 1,
        startTimeUnixNano: String(BigInt(Date.now() - MIN) * 1_000_000n),
        endTimeUnixNano: String(BigInt(Date.now() - MIN + 5) * 1_000_000n),
        attributes: [],
      },
    ]);
    const lone = (await seriesOf('batch'))[0]!;
    const { status, body } = await edge(lone.id);
    expect(status).toBe(200);
    expect(body.callee).toBeNull();
    expect(body.views.map((v: any) => v.series)).toEqual([null, null, null]);
    expect((await edge('999999')).status).toBe(404);
    expect((await edge(lone.id, '&q=2')).status).toBe(400);
    expect((await edge(lone.id, '&onset=yesterday')).status).toBe(400);
  });
});
