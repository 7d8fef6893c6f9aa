/**
 * One service that exports both spans and its HTTP server metrics, as the
 * OpenTelemetry Java agent does by default: both describe the same calls and
 * land in the same series, which counted every call twice (x1.99 on a real
 * Java service). The series keeps the spans' count; metrics still feed the
 * series that have no spans. Real OTel JS SDK exporters on both signals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';

const SERVICE = 'store';
const resource = () => resourceFromAttributes({ 'service.name': SERVICE, 'host.name': 'store-1' });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function calls(name: string): Promise<number> {
  const list = (await (await fetch(`${server.url}/api/v1/series?service=${SERVICE}`)).json()) as {
    series: Array<{ id: string; name: string }>;
  };
  const s = list.series.find((x) => x.name === name);
  if (!s) return 0;
  const body = (await (
    await fetch(`${server.url}/api/v1/series/${s.id}/quantiles?from=now-2h&step=1d&q=0.5`)
  ).json()) as { points: Array<{ count: number }> };
  return body.points.reduce((a, p) => a + p.count, 0);
}

describe('spans and metrics of the same calls', () => {
  it('count each call once: the series with spans keeps their count, a metric-only series its metrics', async () => {
    const durations = Array.from({ length: 30 }, (_, i) => 20 + (i % 7));
    const tracer = new BasicTracerProvider({
      resource: resource(),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` })),
      ],
    });
    const t0 = Date.now() - 120_000;
    durations.forEach((d, i) => {
      const span = tracer.getTracer('t').startSpan('GET /lookup', {
        kind: SpanKind.SERVER,
        startTime: t0 + i * 100,
        attributes: { 'http.request.method': 'GET', 'http.route': '/lookup' },
      });
      span.end(t0 + i * 100 + d);
    });
    await tracer.forceFlush();
    await tracer.shutdown();

    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({
        url: `${server.otlpUrl}/v1/metrics`,
        temporalityPreference: AggregationTemporality.CUMULATIVE,
      }),
      exportIntervalMillis: 3_600_000,
    });
    const meters = new MeterProvider({ resource: resource(), readers: [reader] });
    const h = meters
      .getMeter('io.opentelemetry.http')
      .createHistogram('http.server.request.duration', {
        unit: 's',
      });
    for (const d of durations)
      h.record(d / 1000, { 'http.request.method': 'GET', 'http.route': '/lookup' });
    for (let i = 0; i < 10; i++)
      h.record(0.005, { 'http.request.method': 'GET', 'http.route': '/health' });
    await reader.forceFlush();
    // A later cumulative point: the stream went on advancing, nothing is added at once.
    for (const d of durations)
      h.record(d / 1000, { 'http.request.method': 'GET', 'http.route': '/lookup' });
    await reader.forceFlush();
    await meters.shutdown();

    expect(await calls('GET /lookup')).toBe(30);
    expect(await calls('GET /health')).toBe(10);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/onset_ingest_duplicates_total\{kind="metric_calls"\} 60/);
  });
});
