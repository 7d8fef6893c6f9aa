import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { inferMarkers } from '../src/deploys/infer.ts';
import type { Deploy as Marker } from '@onset/contract';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const MIN = 60_000;
/** A whole minute well in the past: span time, not arrival time, must decide a marker's time. */
const T0 = Math.floor(Date.now() / MIN) * MIN - 6 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** One span per minute in [fromMs, toMs) from a process with these resource attributes, via the official OTLP proto exporter. */
async function sendSpans(
  resource: Record<string, string>,
  fromMs: number,
  toMs: number,
): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` }), {
        maxExportBatchSize: 500,
      }),
    ],
  });
  const tracer = provider.getTracer('deploys-infer-test');
  for (let t = fromMs; t < toMs; t += MIN) {
    const span = tracer.startSpan('GET /lookup', {
      kind: SpanKind.SERVER,
      startTime: t + 7_000,
      attributes: { 'http.request.method': 'GET', 'http.route': '/lookup' },
    });
    span.end(t + 7_005);
  }
  await provider.forceFlush();
  await provider.shutdown();
}

async function inferred(query = ''): Promise<Marker[]> {
  const res = await fetch(`${server.url}/api/v1/deploys?source=inferred${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { deploys: Marker[] }).deploys;
}

describe('inferred deploy markers from OTLP traffic', () => {
  it('a kernel rollout across hosts mid-stream becomes exactly one kernel marker with those hosts and the first new span time', async () => {
    const old = { 'os.version': '4.4.0-138' };
    const neu = { 'os.version': '4.15.0-36' };
    const svc = (service: string, host: string) => ({ 'service.name': service, 'host.name': host });
    // node-1 reboots into 4.15 at T0+60m, node-2 at T0+75m; node-3 stays on 4.4.
    await sendSpans({ ...svc('pageserver', 'node-1'), ...old }, T0, T0 + 60 * MIN);
    await sendSpans({ ...svc('pageserver', 'node-1'), ...neu }, T0 + 60 * MIN, T0 + 120 * MIN);
    await sendSpans({ ...svc('pageserver', 'node-2'), ...old }, T0, T0 + 75 * MIN);
    await sendSpans({ ...svc('pageserver', 'node-2'), ...neu }, T0 + 75 * MIN, T0 + 120 * MIN);
    await sendSpans({ ...svc('pageserver', 'node-3'), ...old }, T0, T0 + 120 * MIN);
    // A second service on node-1 sees the same reboot: still the same rollout, not a second marker.
    await sendSpans({ ...svc('walredo', 'node-1'), ...old }, T0, T0 + 61 * MIN);
    await sendSpans({ ...svc('walredo', 'node-1'), ...neu }, T0 + 61 * MIN, T0 + 90 * MIN);

    const r = await inferMarkers(server.onset.pool);
    expect(r.created).toBe(1);

    const kernel = await inferred('&kind=kernel');
    expect(kernel).toHaveLength(1);
    expect(kernel[0]).toMatchObject({
      service: null,
      hosts: ['node-1', 'node-2'],
      kind: 'kernel',
      component: 'kernel',
      from_version: '4.4.0-138',
      to_version: '4.15.0-36',
      at: iso(T0 + 60 * MIN),
      source: 'inferred',
    });
    expect(await inferred('&host=node-3')).toEqual([]);

    // Passes repeat every minute: running again (and after the rows settle) adds nothing.
    await inferMarkers(server.onset.pool);
    await inferMarkers(server.onset.pool, { graceMs: 0 });
    expect((await inferMarkers(server.onset.pool, { graceMs: 0 })).resources).toBe(0);
    expect(await inferred('&kind=kernel')).toEqual(kernel);
  });

  it('a hyper bump with a new service.version yields one code and one dependency marker; first-seen values yield none', async () => {
    const base = T0 + 3 * 3_600_000;
    for (const host of ['u-1', 'u-2']) {
      const shift = host === 'u-1' ? 0 : 12 * MIN; // rolling deploy, 12 minutes apart
      await sendSpans(
        {
          'service.name': 'urlite',
          'host.name': host,
          'service.version': '1.4.0',
          'dependency.hyper': '0.12.35',
          'dependency.tokio': '0.1.22',
        },
        base,
        base + 30 * MIN + shift,
      );
      await sendSpans(
        {
          'service.name': 'urlite',
          'host.name': host,
          'service.version': '1.5.0',
          'dependency.hyper': '0.13.1',
          'dependency.tokio': '0.1.22',
        },
        base + 30 * MIN + shift,
        base + 60 * MIN,
      );
    }
    // A service seen for the first time is not a deploy.
    await sendSpans(
      {
        'service.name': 'fresh',
        'host.name': 'f-1',
        'service.version': '9.9.9',
        'dependency.serde': '1.0.0',
      },
      base,
      base + 10 * MIN,
    );

    await inferMarkers(server.onset.pool);
    const urlite = await inferred('&service=urlite');
    expect(urlite).toHaveLength(2);
    const code = urlite.find((m) => m.kind === 'code');
    const dep = urlite.find((m) => m.kind === 'dependency');
    expect(code).toMatchObject({
      hosts: ['u-1', 'u-2'],
      from_version: '1.4.0',
      to_version: '1.5.0',
      at: iso(base + 30 * MIN),
    });
    expect(dep).toMatchObject({
      hosts: ['u-1', 'u-2'],
      component: 'hyper',
      from_version: '0.12.35',
      to_version: '0.13.1',
      at: iso(base + 30 * MIN),
    });
    expect(await inferred('&service=fresh')).toEqual([]);
  });

  it('the same change hours apart is two rollouts; a later host within the window extends the marker', async () => {
    const base = T0 + 5 * 3_600_000 - 4 * 3_600_000; // overlaps nothing above: different hosts and versions
    const host = (h: string, v: string) => ({
      'service.name': 'agent',
      'host.name': h,
      'os.version': v,
    });
    await sendSpans(host('w-1', '6.1.0-13'), base, base + 10 * MIN);
    await sendSpans(host('w-1', '6.1.0-18'), base + 10 * MIN, base + 20 * MIN);
    await sendSpans(host('w-2', '6.1.0-13'), base, base + 180 * MIN);
    await sendSpans(host('w-2', '6.1.0-18'), base + 180 * MIN, base + 190 * MIN);
    await inferMarkers(server.onset.pool);
    const two = await inferred('&kind=kernel&host=w-1');
    expect(two).toHaveLength(1);
    expect(two[0]).toMatchObject({ hosts: ['w-1'], at: iso(base + 10 * MIN) });
    const later = await inferred('&kind=kernel&host=w-2');
    expect(later).toHaveLength(1);
    expect(later[0]).toMatchObject({ hosts: ['w-2'], at: iso(base + 180 * MIN) });

    // w-3 reboots 20 minutes after w-2, reported in a later pass: it joins w-2's marker.
    await sendSpans(host('w-3', '6.1.0-13'), base, base + 200 * MIN);
    await sendSpans(host('w-3', '6.1.0-18'), base + 200 * MIN, base + 210 * MIN);
    const r = await inferMarkers(server.onset.pool);
    expect(r).toMatchObject({ created: 0, extended: 1 });
    // Its per-(service, host) detail grows with it (the marker's `changes`).
    expect(later[0]!.changes).toEqual([
      { service: 'agent', host: 'w-2', at: iso(base + 180 * MIN) },
    ]);
    expect(await inferred('&kind=kernel&host=w-3')).toEqual([
      {
        ...later[0],
        hosts: ['w-2', 'w-3'],
        changes: [
          ...later[0]!.changes!,
          { service: 'agent', host: 'w-3', at: iso(base + 200 * MIN) },
        ],
      },
    ]);
  });

  it('a backfill of older spans arriving after the new version still places the marker at the switch', async () => {
    const base = T0 + 30 * MIN;
    const res = { 'service.name': 'replayed', 'host.name': 'r-1' };
    // The new kernel's spans arrive first and are taken as the host's first value...
    await sendSpans({ ...res, 'os.version': '5.10.0-1' }, base + 40 * MIN, base + 50 * MIN);
    await inferMarkers(server.onset.pool);
    expect(await inferred('&host=r-1')).toEqual([]);
    // ...then yesterday's buffered spans from the old kernel are replayed.
    await sendSpans({ ...res, 'os.version': '4.19.0-9' }, base, base + 40 * MIN);
    await inferMarkers(server.onset.pool);
    const m = await inferred('&host=r-1');
    expect(m).toHaveLength(1);
    expect(m[0]).toMatchObject({
      kind: 'kernel',
      from_version: '4.19.0-9',
      to_version: '5.10.0-1',
      at: iso(base + 40 * MIN),
      hosts: ['r-1'],
    });
  });
});
