import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Export spans of known durations through a real OTel SDK pipeline. */
async function exportSpans(
  exporter: SpanExporter,
  service: string,
  durationsMs: number[],
  baseMs: number,
): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': service,
      'host.name': 'node-1',
      'os.version': '6.1.0-13-amd64',
    }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, { maxExportBatchSize: 200, maxQueueSize: 10_000 }),
    ],
  });
  const tracer = provider.getTracer('onset-test');
  durationsMs.forEach((d, i) => {
    const start = baseMs + i * 10;
    const span = tracer.startSpan('GET /lookup', {
      kind: SpanKind.SERVER,
      startTime: start,
      attributes: { 'http.request.method': 'GET', 'http.route': '/lookup' },
    });
    span.end(start + d);
  });
  await provider.forceFlush();
  await provider.shutdown();
}

async function seriesFor(service: string) {
  const res = await fetch(`${server.url}/api/v1/series?service=${service}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as {
    series: Array<{ id: string; op: string; view: string; name: string; hosts: string[] }>;
  };
  return body.series;
}

async function quantilesOf(id: string, from: number, to: number, q = '0.5,0.9,0.99') {
  const url = `${server.url}/api/v1/series/${id}/quantiles?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&step=1h&q=${q}`;
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return (await res.json()) as {
    points: Array<{ t: string; count: number; q: Record<string, number> }>;
  };
}

function exact(sorted: number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

describe('OTLP ingest from the official OpenTelemetry JS SDK', () => {
  for (const [label, make] of [
    ['protobuf exporter', (url: string) => new ProtoExporter({ url: `${url}/v1/traces` })],
    ['JSON exporter', (url: string) => new JsonExporter({ url: `${url}/v1/traces` })],
  ] as const) {
    it(`${label}: the quantiles API returns the durations that were sent`, async () => {
      const service = label.startsWith('protobuf') ? 'sdk-proto' : 'sdk-json';
      // Heavy-tailed durations from 0.2 ms to 9 s; a fixed hour so every span lands in one step.
      const durations = Array.from({ length: 400 }, (_, i) => 0.2 * Math.pow(1.0335, i));
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
      await exportSpans(make(server.otlpUrl), service, durations, hour + 60_000);
      const [s] = await seriesFor(service);
      expect(s).toMatchObject({
        op: 'request',
        view: 'server',
        name: 'GET /lookup',
        hosts: ['node-1'],
      });
      const { points } = await quantilesOf(s!.id, hour, hour + 3_600_000);
      expect(points).toHaveLength(1);
      expect(points[0]!.count).toBe(400);
      const sorted = [...durations].sort((a, b) => a - b);
      for (const q of ['0.5', '0.9', '0.99']) {
        const want = exact(sorted, Number(q));
        expect(Math.abs(points[0]!.q[q]! - want) / want).toBeLessThanOrEqual(0.02);
      }
    });
  }

  it('the same exporter pointed at the main port works too, and spans of a re-sent batch count once', async () => {
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000;
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'resend' } }] },
          scopeSpans: [
            {
              spans: [1, 2, 3].map((i) => ({
                traceId: '0af7651916cd43dd8448eb211c80319c',
                spanId: `b7ad6b716920333${i}`,
                name: 'fsync',
                kind: 1,
                startTimeUnixNano: String(BigInt(hour + 5_000) * 1_000_000n),
                endTimeUnixNano: String(BigInt(hour + 5_000) * 1_000_000n + BigInt(i) * 1_000_000n),
              })),
            },
          ],
        },
      ],
    };
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    }
    const [s] = await seriesFor('resend');
    expect(s!.op).toBe('fsync');
    const { points } = await quantilesOf(s!.id, hour, hour + 3_600_000);
    expect(points[0]!.count).toBe(3);
  });
});

describe('GET /api/v1/series/{id}/quantiles?layout=columns', () => {
  it('carries the same steps, counts and quantiles as the points layout, one array per field', async () => {
    const base = Math.floor(Date.now() / 60_000) * 60_000 - 30 * 60_000;
    // Three minutes with data and a hole between them: columns list only steps that have data, like points.
    for (const [minute, ms] of [
      [0, [1, 2, 3]],
      [1, [10, 20]],
      [5, [100]],
    ] as const) {
      await exportSpans(
        new ProtoExporter({ url: `${server.otlpUrl}/v1/traces` }),
        'columns',
        [...ms],
        base + minute * 60_000 + 1_000,
      );
    }
    const [s] = await seriesFor('columns');
    const qs = `from=${new Date(base).toISOString()}&to=${new Date(base + 10 * 60_000).toISOString()}&step=1m&q=0.5,0.99`;
    const points = (await (
      await fetch(`${server.url}/api/v1/series/${s!.id}/quantiles?${qs}`)
    ).json()) as {
      points: Array<{ t: string; count: number; q: Record<string, number> }>;
    };
    const res = await fetch(`${server.url}/api/v1/series/${s!.id}/quantiles?${qs}&layout=columns`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      step_ms: number;
      columns: { t: number[]; count: number[]; q: Record<string, number[]> };
      points?: unknown;
    };
    expect(body.points).toBeUndefined();
    expect(body.step_ms).toBe(60_000);
    expect(body.columns.t).toEqual([base, base + 60_000, base + 5 * 60_000]);
    expect(body.columns.t.map((t) => new Date(t).toISOString())).toEqual(
      points.points.map((p) => p.t),
    );
    expect(body.columns.count).toEqual([3, 2, 1]);
    for (const q of ['0.5', '0.99'])
      expect(body.columns.q[q]).toEqual(points.points.map((p) => p.q[q]));
    expect(Math.abs(body.columns.q['0.5']![1]! - 10) / 10).toBeLessThanOrEqual(0.02);
  });

  it('refuses an unknown layout with a 400 that names the parameter', async () => {
    const [s] = await seriesFor('columns');
    const res = await fetch(`${server.url}/api/v1/series/${s!.id}/quantiles?layout=rows`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/layout/);
  });
});
