/**
 * A real paired edge: two services traced by the OpenTelemetry JS SDK, one
 * calling the other over loopback HTTP with the W3C traceparent header, both
 * exporting OTLP/protobuf to Onset. The overview counts each service's calls
 * (not the edge's client, server and gap views again), and each view of the
 * edge lists the hosts that feed it: the caller's for the client view, the
 * callee's for the server view, both for the gap.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Arriving } from '@onset/contract';
import { pairEdges } from '../src/edges/pairing.ts';
import { Registry } from '../src/otlp/registry.ts';
import { Partitions } from '../src/db/partitions.ts';

const REQUESTS = 40;
const propagator = new W3CTraceContextPropagator();

let onset: TestServer;
let inventory: Server;
beforeAll(async () => {
  onset = await startTestServer();
});
afterAll(async () => {
  inventory?.close();
  await onset?.close();
});

function tracerProvider(service: string) {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': `${service}-1` }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${onset.otlpUrl}/v1/traces` })),
    ],
  });
}

interface SeriesBody {
  id: string;
  view: string;
  peer: string | null;
  hosts: string[];
  calls_from: string;
}

describe('a real paired edge', () => {
  it('counts the requests sent once per service, and each view lists the hosts that feed it', async () => {
    const callee = tracerProvider('inventory');
    inventory = createServer((req, res) => {
      const parent = propagator.extract(context.active(), req.headers, {
        get: (h, k) => h[k] as string | undefined,
        keys: (h) => Object.keys(h),
      });
      const span = callee.getTracer('inventory').startSpan(
        'GET /stock/{sku}',
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': 'GET', 'http.route': '/stock/{sku}' },
        },
        parent,
      );
      res.end('{"in_stock":3}', () => span.end());
    });
    await new Promise<void>((r) => inventory.listen(0, '127.0.0.1', r));
    const port = (inventory.address() as AddressInfo).port;

    const caller = tracerProvider('web');
    for (let i = 0; i < REQUESTS; i++) {
      const span = caller.getTracer('web').startSpan('GET', {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'GET',
          'server.address': '127.0.0.1',
          'url.full': `http://127.0.0.1:${port}/stock/${i}`,
        },
      });
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(context.active(), span), headers, {
        set: (h, k, v) => (h[k] = v),
      });
      const res = await fetch(`http://127.0.0.1:${port}/stock/${i}`, { headers });
      await res.text();
      span.end();
    }
    await callee.forceFlush();
    await caller.forceFlush();
    await callee.shutdown();
    await caller.shutdown();

    const pool = onset.onset.pool;
    const paired = await pairEdges(pool, new Registry(pool), new Partitions(pool), {
      uptoMs: Date.now() + 1000,
    });
    expect(paired.pairs).toBe(REQUESTS);

    // The overview: each service's own calls, once.
    const arriving = (await (
      await fetch(`${onset.url}/api/v1/arriving?from=now-1h`)
    ).json()) as Arriving;
    const svc = (name: string) => arriving.services.find((x) => x.service === name);
    expect(svc('web')).toMatchObject({ calls: REQUESTS, hosts: ['web-1'] });
    expect(svc('inventory')).toMatchObject({ calls: REQUESTS, hosts: ['inventory-1'] });

    // The edge's views, filed under the caller: who feeds each.
    const list = (await (
      await fetch(`${onset.url}/api/v1/series?service=web&peer=inventory`)
    ).json()) as { series: SeriesBody[] };
    const view = (v: string) => list.series.find((s) => s.view === v);
    expect(view('server')).toMatchObject({ hosts: ['inventory-1'], calls_from: 'paired_spans' });
    expect(view('gap')).toMatchObject({
      hosts: ['inventory-1', 'web-1'],
      calls_from: 'paired_spans',
    });
    // The caller's client view: its own series when its labels are the edge's, else the edge's.
    expect(view('client')).toMatchObject({ hosts: ['web-1'] });
    const own = (await (
      await fetch(`${onset.url}/api/v1/series?service=web&view=client`)
    ).json()) as { series: SeriesBody[] };
    for (const s of own.series) expect(s.hosts).toEqual(['web-1']);
  });
});
