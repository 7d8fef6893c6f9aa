import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  AggregationType,
  AggregationTemporality,
} from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startTestServer, type TestServer } from '@onset/testkit';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function seriesNamed(service: string) {
  const res = await fetch(`${server.url}/api/v1/series?service=${service}`);
  return (
    (await res.json()) as { series: Array<{ id: string; op: string; view: string; name: string }> }
  ).series;
}

async function p50(id: string, q = '0.5'): Promise<{ count: number; p50: number }> {
  const res = await fetch(
    `${server.url}/api/v1/series/${id}/quantiles?from=now-1h&to=now%2B1h&step=1d&q=${q}`.replace(
      '%2B1h',
      '',
    ),
  );
  const body = (await res.json()) as {
    points: Array<{ count: number; q: Record<string, number> }>;
  };
  const count = body.points.reduce((a, p) => a + p.count, 0);
  return { count, p50: body.points.at(-1)?.q[q] ?? NaN };
}

function meter(service: string, temporality: AggregationTemporality, exponential: boolean) {
  const exporter = new OTLPMetricExporter({
    url: `${server.otlpUrl}/v1/metrics`,
    temporalityPreference: temporality,
  });
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': 'metrics-host' }),
    readers: [reader],
    views: exponential
      ? [{ instrumentName: '*', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }]
      : [],
  });
  return { provider, reader };
}

describe('OTLP metrics: latency histograms become observations of the same series model', () => {
  it('explicit-bucket histogram (cumulative) from the OTel SDK: re-exports add only the new counts', async () => {
    const { provider, reader } = meter(
      'metrics-explicit',
      AggregationTemporality.CUMULATIVE,
      false,
    );
    const h = provider.getMeter('t').createHistogram('http.server.request.duration', {
      unit: 's',
      // The semantic-conventions boundaries for HTTP durations in seconds.
      advice: {
        explicitBucketBoundaries: [
          0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
        ],
      },
    });
    for (let i = 0; i < 50; i++)
      h.record(0.03, { 'http.request.method': 'GET', 'http.route': '/users' });
    await reader.forceFlush();
    for (let i = 0; i < 50; i++)
      h.record(0.03, { 'http.request.method': 'GET', 'http.route': '/users' });
    await reader.forceFlush();
    await reader.forceFlush(); // nothing new: must add nothing
    await provider.shutdown();
    const [s] = await seriesNamed('metrics-explicit');
    expect(s).toMatchObject({ op: 'request', view: 'server', name: 'GET /users' });
    const r = await p50(s!.id);
    expect(r.count).toBe(100);
    // 30 ms sits in the SDK's default (25 ms, 50 ms] bucket: the sender's resolution bounds the answer.
    expect(r.p50).toBeGreaterThan(25);
    expect(r.p50).toBeLessThanOrEqual(50);
  });

  it('exponential histogram (delta) keeps its fine resolution', async () => {
    const { provider, reader } = meter('metrics-exp', AggregationTemporality.DELTA, true);
    const h = provider.getMeter('t').createHistogram('pageserver.spawn.duration', { unit: 'ms' });
    for (let i = 0; i < 200; i++) h.record(2200 + (i % 10));
    await reader.forceFlush();
    await provider.shutdown();
    const [s] = await seriesNamed('metrics-exp');
    expect(s).toMatchObject({ op: 'spawn' });
    const r = await p50(s!.id);
    expect(r.count).toBe(200);
    expect(Math.abs(r.p50 - 2204) / 2204).toBeLessThan(0.05);
  });

  it('explicit buckets much wider than the data: min, max and sum place the counts inside the observed range', async () => {
    // 500 values between 2 and 11 ms recorded in seconds with the SDK's default boundaries
    // [0, 5, 10, 25, ...]: every value lands in the (0, 5 s] bucket. Midpoint placement stored 500 × 2.5 s.
    const { provider, reader } = meter(
      'metrics-wide-buckets',
      AggregationTemporality.CUMULATIVE,
      false,
    );
    const h = provider.getMeter('t').createHistogram('http.server.request.duration', { unit: 's' });
    const attrs = { 'http.request.method': 'GET', 'http.route': '/wide' };
    for (let i = 0; i < 250; i++) h.record((2 + (9 * i) / 499) / 1000, attrs);
    await reader.forceFlush();
    for (let i = 250; i < 500; i++) h.record((2 + (9 * i) / 499) / 1000, attrs);
    await reader.forceFlush(); // cumulative: the second point's delta is placed on its own
    await provider.shutdown();
    const [s] = await seriesNamed('metrics-wide-buckets');
    const r = await p50(s!.id);
    expect(r.count).toBe(500);
    expect(r.p50).toBeGreaterThanOrEqual(2);
    expect(r.p50).toBeLessThanOrEqual(11);
    for (const q of ['0.01', '0.99']) {
      const v = (await p50(s!.id, q)).p50;
      expect(v).toBeGreaterThanOrEqual(2 * 0.98); // clipped to min/max (within Onset's 2% bucket error)
      expect(v).toBeLessThanOrEqual(11 * 1.02);
    }
  });

  it('exponential histogram (cumulative, rescaled as its range grows) stays within the native bucket error', async () => {
    const { provider, reader } = meter('metrics-exp-wide', AggregationTemporality.CUMULATIVE, true);
    const h = provider.getMeter('t').createHistogram('fs.fsync.duration', { unit: 'ms' });
    for (let v = 1; v <= 100; v++) h.record(v);
    await reader.forceFlush();
    for (let v = 101; v <= 1000; v++) h.record(v); // the SDK lowers the scale to fit 160 buckets
    await reader.forceFlush();
    await provider.shutdown();
    const [s] = await seriesNamed('metrics-exp-wide');
    for (const [q, exact] of [
      ['0.5', 500],
      ['0.9', 900],
      ['0.99', 990],
    ] as const) {
      const r = await p50(s!.id, q);
      expect(r.count).toBe(1000);
      // docs/storage.md: at most one native bucket (2^(2^-scale) - 1, 4.4% at scale 4) plus Onset's 2%.
      expect(Math.abs(r.p50 - exact) / exact).toBeLessThan(0.065);
    }
  });

  it('non-latency metrics are ignored without error', async () => {
    const res = await fetch(`${server.otlpUrl}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceMetrics: [
          {
            scopeMetrics: [
              {
                metrics: [
                  { name: 'queue.depth', unit: '1', gauge: { dataPoints: [{ asInt: '3' }] } },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
  });
});
