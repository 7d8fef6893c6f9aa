/**
 * Trace exports decoded in worker threads (ONSET_INGEST_WORKERS=2): protobuf
 * from the real OTel SDK exporter and JSON with a bad span are stored exactly
 * as on the main thread (partial success, 400 for a body that is not OTLP,
 * retries counted once), and the server closes with its threads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ env: { ONSET_INGEST_WORKERS: '2' } });
});
afterAll(async () => {
  await srv?.close();
});

async function count(sql: string): Promise<number> {
  const { rows } = await srv.onset.pool.query<{ n: number }>(sql);
  return rows[0]!.n;
}

describe('decode in worker threads', () => {
  it('stores spans from the OTel SDK protobuf exporter once each', async () => {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'worker-svc', 'host.name': 'h1' }),
      spanProcessors: [
        new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${srv.otlpUrl}/v1/traces` })),
      ],
    });
    const tracer = provider.getTracer('t');
    for (let i = 0; i < 25; i++) tracer.startSpan(`GET /w/${i % 3}`).end();
    await provider.forceFlush();
    await provider.shutdown();
    expect(
      await count(
        `SELECT count(*)::int AS n FROM observations o JOIN series s ON s.id = o.series_id WHERE s.service = 'worker-svc'`,
      ),
    ).toBe(25);
    expect(
      await count(
        `SELECT sum(h.count)::int AS n FROM histograms h JOIN series s ON s.id = h.series_id WHERE s.service = 'worker-svc'`,
      ),
    ).toBe(25);
  });

  it('refuses bad spans one by one, a bad body as a whole, and counts a retry once', async () => {
    const start = BigInt(Date.now() - 60_000) * 1_000_000n;
    const span = (spanId: string, end = start + 2_000_000n) => ({
      traceId: 'ab'.repeat(16),
      spanId,
      name: 'fsync',
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(end),
    });
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'json-svc' } }] },
          scopeSpans: [
            {
              spans: [span('1'.repeat(16)), span('2'.repeat(16), start - 1n), span('3'.repeat(16))],
            },
          ],
        },
      ],
    });
    const post = (b: string, type = 'application/json') =>
      fetch(`${srv.otlpUrl}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: b,
      });
    const first = await post(body);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      partialSuccess: { rejectedSpans: '1', errorMessage: 'span ends before it starts' },
    });
    expect((await post(body)).status).toBe(200); // an OTLP retry
    expect(
      await count(
        `SELECT count(*)::int AS n FROM observations o JOIN series s ON s.id = o.series_id WHERE s.service = 'json-svc'`,
      ),
    ).toBe(2);
    const bad = await post('not protobuf at all', 'application/x-protobuf');
    expect(bad.status).toBe(400);
    const notJson = await post('{"resourceSpans": 7}');
    expect(notJson.status).toBe(400);
  });
});
