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
import { Partitions } from '../src/db/partitions.ts';
import { compactHistograms } from '../src/otlp/compact.ts';

const SERVICE = 'store';
const resource = (service = SERVICE) =>
  resourceFromAttributes({ 'service.name': service, 'host.name': `${service}-1` });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

interface SeriesBody {
  id: string;
  name: string;
  view: string;
  calls_from: string;
  metrics_not_counted: boolean;
}

async function seriesNamed(name: string, service = SERVICE): Promise<SeriesBody | undefined> {
  const list = (await (await fetch(`${server.url}/api/v1/series?service=${service}`)).json()) as {
    series: SeriesBody[];
  };
  return list.series.find((x) => x.name === name);
}

async function calls(name: string, service = SERVICE): Promise<number> {
  const s = await seriesNamed(name, service);
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
    // The service restarts: a new cumulative stream (new start time) of the same calls.
    const again = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `${server.otlpUrl}/v1/metrics` }),
      exportIntervalMillis: 3_600_000,
    });
    const restarted = new MeterProvider({ resource: resource(), readers: [again] });
    restarted
      .getMeter('io.opentelemetry.http')
      .createHistogram('http.server.request.duration', { unit: 's' })
      .record(0.02, { 'http.request.method': 'GET', 'http.route': '/lookup' });
    await again.forceFlush();
    await restarted.shutdown();

    expect(await calls('GET /lookup')).toBe(30);
    expect(await calls('GET /health')).toBe(10);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/onset_ingest_duplicates_total\{kind="metric_calls"\} 61/);
    // The series say which source they count (api.md "Series").
    expect(await seriesNamed('GET /lookup')).toMatchObject({
      calls_from: 'spans',
      metrics_not_counted: true,
    });
    expect(await seriesNamed('GET /health')).toMatchObject({
      calls_from: 'metrics',
      metrics_not_counted: false,
    });
    const one = (await (
      await fetch(`${server.url}/api/v1/series/${(await seriesNamed('GET /lookup'))!.id}`)
    ).json()) as SeriesBody;
    expect(one.calls_from).toBe('spans');
  });

  it('metrics first, spans later: the spans replace the metric point of the same calls', async () => {
    const service = 'late-spans';
    const route = { 'http.request.method': 'GET', 'http.route': '/items' };
    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({
        url: `${server.otlpUrl}/v1/metrics`,
        temporalityPreference: AggregationTemporality.CUMULATIVE,
      }),
      exportIntervalMillis: 3_600_000,
    });
    const meters = new MeterProvider({ resource: resource(service), readers: [reader] });
    const h = meters
      .getMeter('io.opentelemetry.http')
      .createHistogram('http.server.request.duration', {
        unit: 's',
      });
    const t0 = Date.now();
    const durations = Array.from({ length: 25 }, (_, i) => 10 + (i % 5));
    for (const d of durations) h.record(d / 1000, route);
    await reader.forceFlush();
    await meters.shutdown();
    // Nothing else counts these calls yet: the metrics are the series' source.
    expect(await calls('GET /items', service)).toBe(25);
    expect((await seriesNamed('GET /items', service))?.calls_from).toBe('metrics');

    // The spans of the same calls arrive after the metric point (BSP delay, a slow exporter).
    const tracer = new BasicTracerProvider({
      resource: resource(service),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` })),
      ],
    });
    durations.forEach((d, i) => {
      const span = tracer.getTracer('t').startSpan('GET /items', {
        kind: SpanKind.SERVER,
        startTime: t0 + i,
        attributes: route,
      });
      span.end(t0 + i + d);
    });
    await tracer.forceFlush();
    await tracer.shutdown();
    expect(await calls('GET /items', service)).toBe(50); // both, until the minute is compacted

    await compactHistograms(
      server.onset.pool,
      new Partitions(server.onset.pool),
      Date.now() + 120_000,
    );
    expect(await calls('GET /items', service)).toBe(25);
    expect(await seriesNamed('GET /items', service)).toMatchObject({
      calls_from: 'spans',
      metrics_not_counted: true,
    });
    // Every minute's histogram holds what its exact span durations hold (what SLO backfills
    // take as exact, slos/store.ts).
    const { rows } = await server.onset.pool.query<{ hist: string; raw: string | null }>(
      `SELECT (SELECT sum(count) FROM histograms h WHERE h.series_id = s.id) AS hist,
              (SELECT sum(cardinality(durations)) FROM span_durations d WHERE d.series_id = s.id) AS raw
         FROM series s WHERE s.service = $1 AND s.name = 'GET /items'`,
      [service],
    );
    expect(rows.map((r) => [Number(r.hist), Number(r.raw)])).toEqual([[25, 25]]);
  });

  it('a client metric that names no route counts nothing once the service has client spans', async () => {
    const service = 'caller';
    const tracer = new BasicTracerProvider({
      resource: resource(service),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` })),
      ],
    });
    const t0 = Date.now() - 30_000;
    for (let i = 0; i < 12; i++) {
      const span = tracer.getTracer('t').startSpan('GET', {
        kind: SpanKind.CLIENT,
        startTime: t0 + i * 10,
        attributes: { 'http.request.method': 'GET', 'server.address': 'inventory' },
      });
      span.end(t0 + i * 10 + 15);
    }
    await tracer.forceFlush();
    await tracer.shutdown();

    // The Java agent's client metric: by method and server, no route.
    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `${server.otlpUrl}/v1/metrics` }),
      exportIntervalMillis: 3_600_000,
    });
    const meters = new MeterProvider({ resource: resource(service), readers: [reader] });
    const h = meters
      .getMeter('io.opentelemetry.http')
      .createHistogram('http.client.request.duration', {
        unit: 's',
      });
    for (let i = 0; i < 12; i++)
      h.record(0.015, { 'http.request.method': 'GET', 'server.address': 'inventory' });
    await reader.forceFlush();
    await meters.shutdown();

    const list = (await (await fetch(`${server.url}/api/v1/series?service=${service}`)).json()) as {
      series: SeriesBody[];
    };
    const spans = list.series.filter((x) => x.calls_from === 'spans');
    expect(spans.length).toBeGreaterThan(0);
    let total = 0;
    for (const x of list.series) total += await calls(x.name, service);
    expect(total).toBe(12);
  });
});
