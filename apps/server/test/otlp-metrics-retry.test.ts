/**
 * Cumulative metric streams on a server that cannot commit: the OTel SDK's
 * export of a new stream times out, and the next export (the same cumulative
 * counts, a later time) arrives while the first is still uncommitted. The
 * second may only add what is new since the first (nothing here): before, both
 * found no stream state and each stored the stream's whole count.
 */
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
