import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Arriving } from '@onset/contract';
import { pairEdges, pairingProgressOf } from '../src/edges/pairing.ts';
import { Registry } from '../src/otlp/registry.ts';
import { Partitions } from '../src/db/partitions.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const hex = (n: number, len: number) => n.toString(16).padStart(len, '0');

/** One OTLP JSON request with spans of one service. */
function request(service: string, spans: object[]) {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'host.name', value: { stringValue: `${service}-1` } },
            { key: 'dependency.hyper', value: { stringValue: '0.13.1' } },
          ],
        },
        scopeSpans: [{ spans }],
      },
    ],
  };
}

async function send(body: object) {
  const res = await fetch(`${server.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function quantile(service: string, view: string, q = 0.5) {
  const list = (await (
    await fetch(`${server.url}/api/v1/series?service=${service}&view=${view}`)
  ).json()) as { series: Array<{ id: string; name: string; peer: string | null }> };
  const s = list.series.find((x) => x.peer === 'urlite');
  if (!s) return { series: undefined, value: NaN, count: 0 };
  const body = (await (
    await fetch(`${server.url}/api/v1/series/${s.id}/quantiles?from=now-2h&step=1d&q=${q}`)
  ).json()) as { points: Array<{ count: number; q: Record<string, number> }> };
  return {
    series: s,
    value: body.points[0]?.q[String(q)] ?? NaN,
    count: body.points.reduce((a, p) => a + p.count, 0),
  };
}

describe('edge pairing: the caller-vs-callee gap', () => {
  it('pairs client and server spans sent separately and out of order, and finds a flat +40 ms only the caller sees', async () => {
    const t0 = BigInt(Date.now() - 30 * 60_000) * 1_000_000n;
    const calls = 60;
    const client: object[] = [];
    const serverSpans: object[] = [];
    for (let i = 0; i < calls; i++) {
      const traceId = hex(i + 1, 32);
      const start = t0 + BigInt(i) * 1_000_000_000n;
      const serverUs = 900n + BigInt(i % 7) * 20n; // ~0.9 ms of real work
      const gapUs = 40_000n + BigInt(i % 5) * 100n; // the delayed ACK
      client.push({
        traceId,
        spanId: hex(i + 1, 16),
        name: 'GET',
        kind: 3,
        startTimeUnixNano: String(start),
        endTimeUnixNano: String(start + (serverUs + gapUs) * 1000n),
        attributes: [
          { key: 'http.request.method', value: { stringValue: 'GET' } },
          { key: 'server.address', value: { stringValue: 'urlite.internal' } },
        ],
      });
      serverSpans.push({
        traceId,
        spanId: hex(1000 + i, 16),
        parentSpanId: hex(i + 1, 16),
        name: 'GET /lookup',
        kind: 2,
        startTimeUnixNano: String(start + 20_000_000n),
        endTimeUnixNano: String(start + 20_000_000n + serverUs * 1000n),
        attributes: [
          { key: 'http.request.method', value: { stringValue: 'GET' } },
          { key: 'http.route', value: { stringValue: '/lookup' } },
        ],
      });
    }
    // Callee's spans arrive first, the caller's later, in two requests each.
    await send(request('urlite', serverSpans.slice(30)));
    await send(request('checkout', client.slice(0, 30)));
    await send(request('urlite', serverSpans.slice(0, 30)));
    await send(request('checkout', client.slice(30)));
    // An orphan client span (its server half never comes) must not pair.
    await send(
      request('checkout', [
        { ...(client[0] as object), traceId: hex(999, 32), spanId: hex(999, 16) },
      ]),
    );

    const pool = server.onset.pool;
    const result = await pairEdges(pool, new Registry(pool), new Partitions(pool), {
      uptoMs: Date.now() + 1000,
    });
    expect(result.pairs).toBe(calls);
    expect(result.edges).toBe(1);

    const gap = await quantile('checkout', 'gap');
    expect(gap.series).toMatchObject({ name: 'GET /lookup', peer: 'urlite' });
    expect(gap.count).toBe(calls);
    expect(gap.value).toBeGreaterThan(39);
    expect(gap.value).toBeLessThan(41.5);
    const srv = await quantile('checkout', 'server');
    expect(srv.value).toBeLessThan(1.1);
    const cli = await quantile('checkout', 'client');
    expect(cli.value).toBeGreaterThan(40);

    // A second pass finds nothing new: no call is counted twice.
    const again = await pairEdges(pool, new Registry(pool), new Partitions(pool), {
      uptoMs: Date.now() + 1000,
    });
    expect(again.pairs).toBe(0);
    expect((await quantile('checkout', 'gap')).count).toBe(calls);

    // The overview counts calls, not views: the edge's three views under the caller are the
    // same calls again, and list the callee's host.
    const arriving = (await (
      await fetch(`${server.url}/api/v1/arriving?from=now-1h`)
    ).json()) as Arriving;
    const svc = (name: string) => arriving.services.find((x) => x.service === name);
    expect(svc('checkout')).toMatchObject({ calls: calls + 1, hosts: ['checkout-1'] });
    expect(svc('urlite')).toMatchObject({ calls, hosts: ['urlite-1'] });
    expect(arriving.hosts.find((h) => h.host === 'urlite-1')).toMatchObject({
      services: ['urlite'],
      calls,
    });
    // The latest minute's levels are the service's own spans (the caller's ~40 ms calls), not
    // a mixture with the edge's ~1 ms server view.
    expect(svc('checkout')!.last_minute!.p50_ms).toBeGreaterThan(39);
  });

  it('reads the calls of a slice in batches (ONSET_PAIR_BATCH) without losing or doubling one, and reports progress', async () => {
    const t0 = BigInt(Date.now() - 20 * 60_000) * 1_000_000n;
    const calls = 23;
    const client: object[] = [];
    const serverSpans: object[] = [];
    for (let i = 0; i < calls; i++) {
      const traceId = hex(5000 + i, 32);
      const start = t0 + BigInt(i) * 2_000_000_000n;
      client.push({
        traceId,
        spanId: hex(5000 + i, 16),
        name: 'GET',
        kind: 3,
        startTimeUnixNano: String(start),
        endTimeUnixNano: String(start + 12_000_000n),
        attributes: [{ key: 'server.address', value: { stringValue: 'stock.internal' } }],
      });
      serverSpans.push({
        traceId,
        spanId: hex(9000 + i, 16),
        parentSpanId: hex(5000 + i, 16),
        name: 'GET /level',
        kind: 2,
        startTimeUnixNano: String(start + 1_000_000n),
        endTimeUnixNano: String(start + 3_000_000n),
        attributes: [{ key: 'http.route', value: { stringValue: '/level' } }],
      });
    }
    // The test above paired arrivals up to a second ahead: arrive after that.
    await new Promise((r) => setTimeout(r, 1100));
    await send({
      resourceSpans: [
        ...request('cart', client).resourceSpans,
        ...request('stock', serverSpans).resourceSpans,
      ],
    });
    const pool = server.onset.pool;
    let seen: ReturnType<typeof pairingProgressOf> = null;
    const registry = new Registry(pool);
    const watch = setInterval(() => (seen ??= pairingProgressOf(pool)), 1);
    const result = await pairEdges(pool, registry, new Partitions(pool), {
      uptoMs: Date.now() + 1000,
      batchRows: 4,
    }).finally(() => clearInterval(watch));
    expect(result.pairs).toBe(calls);
    expect(seen).toMatchObject({ pairs: expect.any(Number), upto: expect.any(String) });
    expect(pairingProgressOf(pool)).toBeNull();
    const list = (await (
      await fetch(`${server.url}/api/v1/series?service=cart&view=gap`)
    ).json()) as { series: Array<{ id: string; peer: string | null }> };
    const gap = list.series.find((x) => x.peer === 'stock')!;
    const body = (await (
      await fetch(`${server.url}/api/v1/series/${gap.id}/quantiles?from=now-2h&step=1d&q=0.5`)
    ).json()) as { points: Array<{ count: number; q: Record<string, number> }> };
    expect(body.points.reduce((a, p) => a + p.count, 0)).toBe(calls);
    expect(body.points[0]!.q['0.5']).toBeGreaterThan(9.5);
    expect(body.points[0]!.q['0.5']).toBeLessThan(10.5);
  });
});
