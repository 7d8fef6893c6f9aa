import { readFileSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Partitions } from '../src/db/partitions.ts';
import { startScheduler } from '../src/scheduler/index.ts';
import type { Series as SeriesRow } from '@onset/contract';

// Server A traces itself into server B, a second real Onset that receives
// the spans over OTLP/HTTP protobuf, the way a Collector or Jaeger would.
let receiver: TestServer;
let traced: TestServer;
const SERVICE = 'onset-under-test';

beforeAll(async () => {
  // The receiver starts before self-tracing is switched on, so only A is traced.
  receiver = await startTestServer();
  process.env.ONSET_SELF_TRACING = 'on';
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.otlpUrl;
  process.env.OTEL_SERVICE_NAME = SERVICE;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  traced = await startTestServer();
});
afterAll(async () => {
  await traced?.close();
  await receiver?.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.ONSET_SELF_TRACING;
});

async function receivedSeries(): Promise<SeriesRow[]> {
  const res = await fetch(`${receiver.url}/api/v1/series?service=${SERVICE}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { series: SeriesRow[] }).series;
}

// A series row is committed before its link to the resource (host) that sent
// it (otlp/store.ts), so wait for both.
async function waitForSeries(name: string, timeoutMs = 15_000): Promise<SeriesRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const all = await receivedSeries();
    if (all.some((s) => s.name === name && s.hosts.length > 0) || Date.now() > deadline) return all;
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('self-tracing with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("exports the server's HTTP handling as server spans named by route", async () => {
    expect((await fetch(`${traced.url}/api/v1/series?service=nobody`)).status).toBe(200);
    expect((await fetch(`${traced.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${traced.url}/metrics`)).status).toBe(200);

    const series = await waitForSeries('GET /api/v1/series');
    const api = series.find((s) => s.name === 'GET /api/v1/series');
    expect(api, JSON.stringify(series)).toMatchObject({ op: 'request', view: 'server' });
    // Resource attributes come through: the span names this machine as its host.
    expect(api!.hosts).toContain(os.hostname());
    const { rows } = await receiver.onset.pool.query(
      `SELECT attrs FROM resources WHERE service = $1`,
      [SERVICE],
    );
    const version = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ).version;
    expect(rows.map((r) => r.attrs['service.version'])).toContain(version);
    // Probes and scrapes are not traced.
    expect(series.some((s) => /healthz|metrics/.test(s.name))).toBe(false);

    // The receiver reads back real durations for the traced requests.
    // The series is registered before the export's spans commit: wait for them (the export is
    // acknowledged to the traced server only once they are), bounded.
    const readPoints = async () => {
      const from = new Date(Date.now() - 3_600_000).toISOString();
      const to = new Date(Date.now() + 60_000).toISOString();
      const q = await fetch(
        `${receiver.url}/api/v1/series/${api!.id}/quantiles?from=${from}&to=${to}&step=1h&q=0.5`,
      );
      return ((await q.json()) as { points: Array<{ count: number; q: Record<string, number> }> })
        .points;
    };
    let points = await readPoints();
    for (let i = 0; i < 100 && !points.some((p) => p.count > 0); i++) {
      await new Promise((r) => setTimeout(r, 150));
      points = await readPoints();
    }
    expect(points.reduce((n, p) => n + p.count, 0)).toBeGreaterThanOrEqual(1);
    expect(points[0]!.q['0.5']).toBeGreaterThan(0);
  });

  it('traces ingest on the OTLP port too', async () => {
    const res = await fetch(`${traced.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceSpans: [] }),
    });
    expect(res.status).toBe(200);
    const series = await waitForSeries('POST /v1/traces');
    expect(series.find((s) => s.name === 'POST /v1/traces')).toMatchObject({
      op: 'request',
      view: 'server',
    });
  });

  it('exports a span for each background job the worker runs', async () => {
    const { pool, config, app, registry } = traced.onset;
    const scheduler = await startScheduler({
      config,
      pool,
      partitions: new Partitions(pool),
      log: app.log,
      registry,
    });
    try {
      await pool.query(`SELECT graphile_worker.add_job('maintenance', '{}'::json)`);
      const series = await waitForSeries('job maintenance', 20_000);
      expect(
        series.find((s) => s.name === 'job maintenance'),
        JSON.stringify(series),
      ).toMatchObject({ view: 'internal' });
    } finally {
      await scheduler.stop();
    }
  });
});
