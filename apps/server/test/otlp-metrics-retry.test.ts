/**
 * OTLP metric exports sent again are counted once. Delta points: an export
 * stored, then sent again (a Collector retrying on its own timeout), adds
 * nothing. Cumulative streams on a server that cannot commit: the OTel SDK's
 * export of a new stream times out, and the next export (the same cumulative
 * counts, a later time) arrives while the first is still uncommitted. The
 * second may only add what is new since the first (nothing here): before, both
 * found no stream state and each stored the stream's whole count.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startTestServer, type TestServer } from '@onset/testkit';

let server: TestServer;
let db: pg.Client;
beforeAll(async () => {
  server = await startTestServer();
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.query('ROLLBACK').catch(() => {});
  await db?.end().catch(() => {});
  await server?.close();
});

async function countOf(service: string, route: string): Promise<number> {
  const list = await fetch(`${server.url}/api/v1/series?service=${service}`);
  const { series } = (await list.json()) as { series: Array<{ id: string; name: string }> };
  const s = series.find((x) => x.name.includes(route));
  if (!s) return 0;
  const res = await fetch(
    `${server.url}/api/v1/series/${s.id}/quantiles?from=now-1h&step=1m&q=0.5`,
  );
  const { points } = (await res.json()) as { points: Array<{ count: number }> };
  return points.reduce((n, p) => n + p.count, 0);
}

async function lockWaiters(): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  return rows[0]!.n;
}

async function until(what: string, pred: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a cumulative stream exported again while its first export is in flight', () => {
  it('is counted once (the OTel SDK exporter timing out against a stalled commit)', async () => {
    const service = 'metrics-stalled';
    const exporter = new OTLPMetricExporter({
      url: `${server.otlpUrl}/v1/metrics`,
      temporalityPreference: AggregationTemporality.CUMULATIVE,
      timeoutMillis: 1_000,
    });
    const reader = new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: 3_600_000,
      exportTimeoutMillis: 1_000,
    });
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': service, 'host.name': 'h1' }),
      readers: [reader],
    });
    const h = provider.getMeter('t').createHistogram('http.server.request.duration', { unit: 's' });
    const warm = { 'http.request.method': 'GET', 'http.route': '/warm' };
    const route = { 'http.request.method': 'GET', 'http.route': '/stalled' };
    // Series, resources and partitions exist before the database stalls.
    h.record(0.02, warm);
    await reader.forceFlush();
    expect(await countOf(service, '/warm')).toBe(1);

    await db.query('BEGIN');
    await db.query('LOCK TABLE histograms IN SHARE MODE');
    const before = await lockWaiters();
    for (let i = 0; i < 50; i++) h.record(0.03, route);
    // The first export of /stalled times out at the client; the next one carries the same counts.
    await reader.forceFlush().catch(() => {});
    await until('the first export to stall', async () => (await lockWaiters()) > before);
    await reader.forceFlush().catch(() => {});
    await until('the second export to stall', async () => (await lockWaiters()) > before + 1);
    await db.query('COMMIT');
    await until('the stalled exports to finish', async () => (await lockWaiters()) === 0);
    await reader.forceFlush(); // and one more once the server is back: still nothing new
    await provider.shutdown();

    expect(await countOf(service, '/stalled')).toBe(50);
    expect(await countOf(service, '/warm')).toBe(1);
  });
});

describe('a delta export sent again after it was stored', () => {
  let receiver: Server;
  const bodies: Buffer[] = [];
  beforeAll(async () => {
    // Captures what the OTel SDK exporter sends, to post it to the server as a client would.
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise((r) => receiver?.close(r));
  });

  async function post(body: Buffer): Promise<void> {
    const res = await fetch(`${server.otlpUrl}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array(body),
    });
    expect(res.status, await res.text()).toBe(200);
  }

  it('adds nothing, alone or in a batch with later points (the OTel SDK’s delta points)', async () => {
    const service = 'metrics-delta-resent';
    const port = (receiver.address() as AddressInfo).port;
    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({
        url: `http://127.0.0.1:${port}/v1/metrics`,
        temporalityPreference: AggregationTemporality.DELTA,
      }),
      exportIntervalMillis: 3_600_000,
    });
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': service, 'host.name': 'h1' }),
      readers: [reader],
    });
    const h = provider.getMeter('t').createHistogram('http.server.request.duration', { unit: 's' });
    const route = { 'http.request.method': 'GET', 'http.route': '/delta' };
    for (let i = 0; i < 10; i++) h.record(0.03, route);
    await reader.forceFlush();
    for (let i = 0; i < 20; i++) h.record(0.03, route);
    await reader.forceFlush();
    await provider.shutdown();
    expect(bodies).toHaveLength(2);
    const [first, second] = bodies as [Buffer, Buffer];

    await post(first);
    expect(await countOf(service, '/delta')).toBe(10);
    await post(first); // the same export again
    expect(await countOf(service, '/delta')).toBe(10);
    // A batch holding the re-sent interval and the next one (protobuf messages concatenate).
    const batch = Buffer.concat([first, second]);
    await post(batch);
    expect(await countOf(service, '/delta')).toBe(30);
    await post(batch);
    expect(await countOf(service, '/delta')).toBe(30);
  });
});
