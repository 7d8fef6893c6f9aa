/**
 * SDKs and agents send logs to the OTLP endpoint they send traces to (the
 * Java agent does by default). Onset stores no logs: the real OTel log
 * exporters get a 200 they take as success (no retry, no warning per 404),
 * with every record counted as refused in the partial success, and nothing
 * else changes on the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { startTestServer, type TestServer } from '@onset/testkit';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Log records as the SDK makes them, ready for any exporter. */
async function records(n: number): Promise<ReadableLogRecord[]> {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor(memory)] });
  const logger = provider.getLogger('checkout');
  for (let i = 0; i < n; i++) logger.emit({ body: `order ${i} placed`, severityText: 'INFO' });
  await provider.forceFlush();
  const out = memory.getFinishedLogRecords();
  await provider.shutdown();
  return out;
}

function exportWith(
  exporter: ProtoLogExporter | JsonLogExporter,
  logs: ReadableLogRecord[],
): Promise<{ code: number; error?: Error }> {
  return new Promise((resolve) => exporter.export(logs, resolve));
}

async function refusedLogRecords(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const m = /onset_ingest_rejected_total\{reason="log_record"\} (\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('POST /v1/logs', () => {
  it('the SDK protobuf and JSON log exporters succeed; every record is counted as refused', async () => {
    const before = await refusedLogRecords();
    const proto = new ProtoLogExporter({ url: `${server.otlpUrl}/v1/logs` });
    expect(await exportWith(proto, await records(3))).toMatchObject({ code: 0 });
    const json = new JsonLogExporter({ url: `${server.otlpUrl}/v1/logs` });
    expect(await exportWith(json, await records(2))).toMatchObject({ code: 0 });
    await proto.shutdown();
    await json.shutdown();
    expect((await refusedLogRecords()) - before).toBe(5);
    // Nothing is stored as a series.
    const series = (await (await fetch(`${server.url}/api/v1/series`)).json()) as {
      series: unknown[];
    };
    expect(series.series).toHaveLength(0);
  });

  it('answers with the partial success saying why, in the request encoding', async () => {
    const res = await fetch(`${server.otlpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'x' } }, {}] }] }],
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      partialSuccess: { rejectedLogRecords: string; errorMessage: string };
    };
    expect(body.partialSuccess.rejectedLogRecords).toBe('2');
    expect(body.partialSuccess.errorMessage).toMatch(/not logs.*OTEL_LOGS_EXPORTER=none/);
  });

  it('refuses bodies that are not a logs export with a 400', async () => {
    const bad = await fetch(`${server.otlpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceLogs: 'nope' }),
    });
    expect(bad.status).toBe(400);
    const garbage = await fetch(`${server.otlpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]),
    });
    expect(garbage.status).toBe(400);
  });
});
