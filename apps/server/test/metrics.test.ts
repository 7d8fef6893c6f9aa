import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Partitions } from '../src/db/partitions.ts';
import { startScheduler, type Scheduler } from '../src/scheduler/index.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseExposition, valueOf } from './metrics-exposition.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function scrape(base = server.url, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

async function exportSpans(n: number): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout', 'host.name': 'node-1' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` })),
    ],
  });
  const tracer = provider.getTracer('metrics-test');
  const base = Date.now() - 60_000;
  for (let i = 0; i < n; i++) {
    const span = tracer.startSpan('GET /cart', {
      kind: SpanKind.SERVER,
      startTime: base + i,
      attributes: { 'http.request.method': 'GET', 'http.route': '/cart' },
    });
    span.end(base + i + 5 + i);
  }
  await provider.forceFlush();
  await provider.shutdown();
}

const hex = (bytes: number, seed: number) => seed.toString(16).padStart(bytes * 2, '0');

describe('GET /metrics', () => {
  it('is valid Prometheus text, and the ingest counters move under a real OTLP export', async () => {
    const before = await scrape();
    for (const name of [
      'onset_ingest_accepted_total',
      'onset_ingest_rejected_total',
      'onset_ingest_duplicates_total',
      'onset_http_requests_total',
      'onset_http_request_duration_seconds',
      'onset_queue_depth',
      'onset_db_pool_connections',
      'onset_detection_pass_duration_seconds',
      'onset_webhook_deliveries_total',
      'onset_jobs_total',
      'process_resident_memory_bytes',
    ])
      expect(before.get(name)?.help, `${name} has HELP`).toBeTruthy();
    expect(before.get('onset_ingest_accepted_total')!.type).toBe('counter');
    expect(before.get('onset_detection_pass_duration_seconds')!.type).toBe('histogram');

    await exportSpans(25);
    // One OTLP JSON request with two good spans and one that ends before it starts.
    const now = Date.now() * 1e6;
    const span = (id: number, start: number, end: number) => ({
      traceId: hex(16, 0xabc000 + id),
      spanId: hex(8, 0xdef000 + id),
      name: 'GET /cart',
      kind: 2,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(end),
      attributes: [{ key: 'http.request.method', value: { stringValue: 'GET' } }],
    });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
          scopeSpans: [
            {
              spans: [
                span(1, now - 5e9, now - 4e9),
                span(2, now - 5e9, now - 3e9),
                span(3, now - 1e9, now - 2e9),
              ],
            },
          ],
        },
      ],
    };
    const post = (b: string, type = 'application/json') =>
      fetch(`${server.otlpUrl}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: b,
      });
    const partial = await post(JSON.stringify(body));
    expect(partial.status).toBe(200);
    expect(
      ((await partial.json()) as { partialSuccess?: { rejectedSpans?: string } }).partialSuccess
        ?.rejectedSpans,
    ).toBe('1');
    // The same request again: all duplicates of what is stored (and the bad span again).
    expect((await post(JSON.stringify(body))).status).toBe(200);
    // Not OTLP at all.
    expect((await post('this is not protobuf', 'application/x-protobuf')).status).toBe(400);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('onset_ingest_accepted_total', { kind: 'spans' })).toBe(27);
    expect(delta('onset_ingest_duplicates_total', { kind: 'spans' })).toBe(2);
    expect(delta('onset_ingest_rejected_total', { reason: 'invalid_span' })).toBe(2);
    expect(
      delta('onset_http_requests_total', {
        route: '/v1/traces',
        method: 'POST',
        status_code: '400',
      }),
    ).toBe(1);
    expect(
      delta('onset_http_requests_total', {
        route: '/v1/traces',
        method: 'POST',
        status_code: '200',
      }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      delta('onset_http_request_duration_seconds_count', { route: '/v1/traces', method: 'POST' }),
    ).toBeGreaterThanOrEqual(4);
    // The pool served those requests; the connections it holds are idle or active.
    const pool =
      valueOf(after, 'onset_db_pool_connections', { state: 'idle' }) +
      valueOf(after, 'onset_db_pool_connections', { state: 'active' });
    expect(pool).toBeGreaterThan(0);
    expect(valueOf(after, 'onset_db_pool_max_connections')).toBeGreaterThanOrEqual(pool);
  });

  it('counts real webhook delivery attempts by format and result, with their duration', async () => {
    // A real receiver on loopback (was: the test incremented the counter itself, which no delivery ever did).
    const rx = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(req.url === '/down' ? 503 : 200).end('ok'));
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(rx.address() as AddressInfo).port}`;
    const json = { 'content-type': 'application/json' };
    try {
      const at = (m: ReturnType<typeof parseExposition>, result: string) =>
        valueOf(m, 'onset_webhook_deliveries_total', { format: 'json', result });
      const before = await scrape();
      for (const path of ['/up', '/down']) {
        const made = await fetch(`${server.url}/api/v1/webhooks`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ url: base + path, format: 'json' }),
        });
        expect(made.status).toBe(201);
        const { id } = (await made.json()) as { id: string };
        expect(
          (
            await fetch(`${server.url}/api/v1/webhooks/${id}/test`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: '{}',
            })
          ).status,
        ).toBe(200);
      }
      const after = await scrape();
      expect(at(after, 'success')).toBe(at(before, 'success') + 1);
      expect(at(after, 'http_error')).toBe(at(before, 'http_error') + 1);
      expect(
        valueOf(after, 'onset_webhook_delivery_duration_seconds_count', { format: 'json' }),
      ).toBe(
        valueOf(before, 'onset_webhook_delivery_duration_seconds_count', { format: 'json' }) + 2,
      );
    } finally {
      await new Promise((r) => rx.close(r));
    }
  });

  it('reports the depth of the real job queue and counts the jobs the worker runs', async () => {
    const { pool, config, app, registry } = server.onset;
    let scheduler: Scheduler | undefined;
    try {
      scheduler = await startScheduler({
        config,
        pool,
        partitions: new Partitions(pool),
        log: app.log,
        registry,
      });
      const before = await scrape();
      expect(valueOf(before, 'onset_queue_depth_up')).toBe(1);
      await pool.query(
        `SELECT graphile_worker.add_job('maintenance', '{}'::json, run_at := now() + interval '1 hour')`,
      );
      await pool.query(
        `SELECT graphile_worker.add_job('maintenance', '{}'::json, run_at := now() + interval '2 hours')`,
      );
      await pool.query(`SELECT graphile_worker.add_job('maintenance', '{}'::json)`);
      let after = await scrape();
      const deadline = Date.now() + 20_000;
      while (
        valueOf(after, 'onset_jobs_total', { task: 'maintenance', result: 'success' }) < 1 &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 200));
        after = await scrape();
      }
      expect(
        valueOf(after, 'onset_jobs_total', { task: 'maintenance', result: 'success' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        valueOf(after, 'onset_job_duration_seconds_count', { task: 'maintenance' }),
      ).toBeGreaterThanOrEqual(1);
      expect(valueOf(after, 'onset_queue_depth', { queue: 'maintenance', state: 'delayed' })).toBe(
        2,
      );
    } finally {
      await scheduler?.stop();
    }
  });

  it('needs the bearer token when ONSET_METRICS_TOKEN is set', async () => {
    const guarded = await startTestServer({ env: { ONSET_METRICS_TOKEN: 'scrape-secret' } });
    try {
      const none = await fetch(`${guarded.url}/metrics`);
      expect(none.status).toBe(401);
      expect(((await none.json()) as { error: string }).error).toBe('unauthorized');
      expect(
        (
          await fetch(`${guarded.url}/metrics`, {
            headers: { authorization: 'Bearer wrong-secret!' },
          })
        ).status,
      ).toBe(401);
      const ok = await scrape(guarded.url, { authorization: 'Bearer scrape-secret' });
      expect(ok.has('onset_ingest_accepted_total')).toBe(true);
    } finally {
      await guarded.close();
    }
  });
});
