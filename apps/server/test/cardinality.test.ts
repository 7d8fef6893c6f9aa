/**
 * The cardinality guard through the real server: limits on series and
 * resources per service and in total, concurrent requests, counted drops in
 * /metrics and GET /api/v1/limits, route templating, limits surviving a
 * restart, and 200,000 distinct span names.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { CardinalityStatus } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { parseExposition, valueOf } from './metrics-exposition.ts';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function start(env: Record<string, string>, databaseUrl?: string): Promise<TestServer> {
  const s = await startTestServer({ env, databaseUrl });
  servers.push(s);
  return s;
}

let seq = 0;
const hex = (bytes: number, n: number) => n.toString(16).padStart(bytes * 2, '0');

interface SpanSpec {
  service: string;
  host?: string;
  name: string;
}

/** One OTLP JSON request; spans grouped by (service, host) resource. */
function body(spans: SpanSpec[]): string {
  const byResource = new Map<string, SpanSpec[]>();
  for (const s of spans) {
    const k = `${s.service}\u0000${s.host ?? 'node-1'}`;
    byResource.set(k, [...(byResource.get(k) ?? []), s]);
  }
  const start = (Date.now() - 120_000) * 1e6;
  return JSON.stringify({
    resourceSpans: [...byResource.values()].map((group) => ({
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: group[0]!.service } },
          { key: 'host.name', value: { stringValue: group[0]!.host ?? 'node-1' } },
        ],
      },
      scopeSpans: [
        {
          spans: group.map((s) => {
            const i = ++seq;
            return {
              traceId: hex(16, i),
              spanId: hex(8, i),
              name: s.name,
              kind: 2,
              startTimeUnixNano: String(start + i * 1000),
              endTimeUnixNano: String(start + i * 1000 + 5_000_000),
            };
          }),
        },
      ],
    })),
  });
}

interface ExportAnswer {
  status: number;
  rejected: number;
  message: string;
}

/** Spans sent again after a 503/429 (the machine is shared; an OTLP exporter retries those too). */
let resentSpans = 0;

async function send(server: TestServer, spans: SpanSpec[]): Promise<ExportAnswer> {
  const payload = body(spans);
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    const json = (await res.json()) as {
      partialSuccess?: { rejectedSpans?: string; errorMessage?: string };
    };
    if ((res.status === 503 || res.status === 429) && attempt < 5) {
      resentSpans += spans.length;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    return {
      status: res.status,
      rejected: Number(json.partialSuccess?.rejectedSpans ?? 0),
      message: json.partialSuccess?.errorMessage ?? '',
    };
  }
}

async function limits(server: TestServer): Promise<CardinalityStatus> {
  const res = await fetch(`${server.url}/api/v1/limits`);
  expect(res.status).toBe(200);
  return (await res.json()) as CardinalityStatus;
}

async function metrics(server: TestServer) {
  const res = await fetch(`${server.url}/metrics`);
  return parseExposition(await res.text());
}

async function count(server: TestServer, sql: string, args: unknown[] = []): Promise<number> {
  const { rows } = await server.onset.pool.query<{ n: number }>(sql, args);
  return rows[0]!.n;
}

/** Lower-case letters only, so route templating keeps every name distinct. */
function word(i: number): string {
  let s = '';
  do {
    s = String.fromCharCode(97 + (i % 26)) + s;
    i = Math.floor(i / 26);
  } while (i > 0);
  return s.padStart(4, 'a');
}

async function inParallel<T>(jobs: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

describe('cardinality limits', () => {
  const env = {
    ONSET_MAX_SERIES_PER_SERVICE: '50',
    ONSET_MAX_SERIES: '120',
    ONSET_MAX_RESOURCES_PER_SERVICE: '3',
    ONSET_MAX_RESOURCES: '1000',
  };
  let server: TestServer;

  it('stops a service at its series limit under concurrent requests; existing series keep working', async () => {
    server = await start(env);
    // 100 distinct names, 10 concurrent requests of 10 names each (every name twice in its request).
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, r) =>
        send(
          server,
          Array.from({ length: 20 }, (_, i) => ({
            service: 'shop',
            name: `op-${word(r * 10 + (i % 10))}`,
          })),
        ),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(
      await count(server, `SELECT count(*)::int AS n FROM series WHERE service = 'shop'`),
    ).toBe(50);
    const rejected = answers.reduce((a, x) => a + x.rejected, 0);
    expect(rejected).toBe(100); // 50 refused names, two spans each
    expect(answers.find((a) => a.rejected > 0)!.message).toMatch(/cardinality limit/);
    const stored = await count(server, 'SELECT count(*)::int AS n FROM observations');
    expect(stored).toBe(100);

    // An admitted series keeps receiving spans; a refused one stays refused.
    const admitted = (
      await server.onset.pool.query<{ name: string }>(
        `SELECT name FROM series WHERE service = 'shop' LIMIT 1`,
      )
    ).rows[0]!.name;
    const again = await send(server, [
      { service: 'shop', name: admitted },
      { service: 'shop', name: 'op-zzzzzz' },
    ]);
    expect(again).toMatchObject({ status: 200, rejected: 1 });
    expect(await count(server, 'SELECT count(*)::int AS n FROM observations')).toBe(101);

    const status = await limits(server);
    expect(status.series).toMatchObject({ per_service: 50, global: 120, used: 50 });
    expect(status.dropped.series).toEqual({ service_limit: 101, global_limit: 0 });
    const shop = status.services.find((s) => s.service === 'shop')!;
    expect(shop).toMatchObject({ series: 50, at_limit: ['series'], dropped_series: 101 });
    expect(shop.examples.length).toBeGreaterThan(0);
    expect(shop.examples[0]).toMatch(/^op-/);
    const m = await metrics(server);
    expect(
      valueOf(m, 'onset_cardinality_dropped_total', { kind: 'series', reason: 'service_limit' }),
    ).toBe(101);
    expect(valueOf(m, 'onset_cardinality_entries', { kind: 'series' })).toBe(50);
    expect(valueOf(m, 'onset_cardinality_limit', { kind: 'series', scope: 'global' })).toBe(120);
  });

  it('stops every service at the global limit', async () => {
    // 50 more services of 2 series each: 70 room left under the global 120.
    const spans = Array.from({ length: 50 }, (_, s) => [
      { service: `svc-${word(s)}`, name: 'GET /a' },
      { service: `svc-${word(s)}`, name: 'GET /b' },
    ]).flat();
    await inParallel(
      Array.from({ length: 10 }, (_, i) => () => send(server, spans.slice(i * 10, i * 10 + 10))),
      5,
    );
    expect(await count(server, 'SELECT count(*)::int AS n FROM series')).toBe(120);
    const status = await limits(server);
    expect(status.series.used).toBe(120);
    expect(status.series.global_reached).toBe(true);
    expect(status.dropped.series.global_limit).toBe(30);
  });

  it('folds resources beyond the limit into one overflow resource per service, spans kept', async () => {
    const name = (
      await server.onset.pool.query<{ name: string }>(
        `SELECT name FROM series WHERE service = 'shop' ORDER BY name LIMIT 1`,
      )
    ).rows[0]!.name;
    const stored = () =>
      count(
        server,
        `SELECT coalesce(sum(h.count), 0)::int AS n FROM histograms h JOIN series s ON s.id = h.series_id
          WHERE s.service = 'shop' AND s.name = $1`,
        [name],
      );
    const before = await stored();
    const hosts = Array.from({ length: 8 }, (_, i) => `host-${word(i)}`);
    const answers = await Promise.all(
      hosts.map((host) => send(server, [{ service: 'shop', host, name }])),
    );
    expect(answers.every((a) => a.status === 200 && a.rejected === 0)).toBe(true);
    // shop had one resource (node-1): 2 more admitted, 6 folded into its overflow resource.
    const resources = (overflow: boolean) =>
      count(
        server,
        `SELECT count(*)::int AS n FROM resources WHERE service = 'shop' AND (attrs ? 'onset.overflow') = $1`,
        [overflow],
      );
    expect(await resources(false)).toBe(3);
    expect(await resources(true)).toBe(1);
    expect((await stored()) - before).toBe(8);
    const status = await limits(server);
    expect(status.dropped.resource.service_limit).toBe(6);
    expect(status.services.find((s) => s.service === 'shop')).toMatchObject({
      resources: 3,
      at_limit: ['resource', 'series'],
      folded_resource: 6,
    });
  });

  it('templates un-templated request names before the limit sees them', async () => {
    const fresh = await start({ ONSET_MAX_SERIES_PER_SERVICE: '5' });
    const spans = Array.from({ length: 300 }, (_, i) => ({
      service: 'users-api',
      name: i % 2 ? `GET /users/${1000 + i}` : `GET /orders/${crypto.randomUUID()}/items`,
    }));
    expect((await send(fresh, spans)).rejected).toBe(0);
    const names = (
      await fresh.onset.pool.query<{ name: string }>(`SELECT name FROM series ORDER BY name`)
    ).rows.map((r) => r.name);
    expect(names).toEqual(['GET /orders/{uuid}/items', 'GET /users/{id}']);
  });

  it('keeps the limits across a restart: counts come from the database', async () => {
    const databaseUrl = server.databaseUrl;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const restarted = await start(env, databaseUrl);
    const status = await limits(restarted);
    expect(status.series.used).toBe(120);
    expect(status.dropped.series.service_limit).toBe(0); // drops are counted per process
    const before = await count(restarted, 'SELECT count(*)::int AS n FROM observations');
    const admitted = (
      await restarted.onset.pool.query<{ name: string }>(
        `SELECT name FROM series WHERE service = 'shop' LIMIT 1`,
      )
    ).rows[0]!.name;
    const answer = await send(restarted, [
      { service: 'shop', name: admitted },
      { service: 'shop', name: 'op-brandnew' },
      { service: 'newcomer', name: 'GET /x' },
    ]);
    expect(answer).toMatchObject({ status: 200, rejected: 2 });
    expect(await count(restarted, 'SELECT count(*)::int AS n FROM observations')).toBe(before + 1);
    expect(await count(restarted, 'SELECT count(*)::int AS n FROM series')).toBe(120);
  });
});

describe('200,000 distinct span names', () => {
  /** The bound docs/api.md states for this run (in-process server plus this test's load generator). */
  const RSS_BOUND_MB = 768;

  it('series stop at the default limit, drops are counted and shown, memory stays bounded', async () => {
    const server = await start({});
    const N = 200_000;
    const BATCH = 5_000;
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const answers = await inParallel(
      Array.from({ length: N / BATCH }, (_, b) => async () => {
        const spans = Array.from({ length: BATCH }, (_, i) => ({
          service: 'catalog',
          name: `GET /item-${word(b * BATCH + i)}`,
        }));
        const a = await send(server, spans);
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        return a;
      }),
      4,
    );
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    const status = await limits(server);
    expect(status.series.per_service).toBe(2000);
    expect(await count(server, `SELECT count(*)::int AS n FROM series`)).toBe(2000);
    expect(status.series.used).toBe(2000);
    expect(answers.reduce((a, x) => a + x.rejected, 0)).toBe(N - 2000);
    // A request that failed after admission (503, retried) counted its drops once per attempt.
    const dropped = status.dropped.series.service_limit;
    expect(dropped).toBeGreaterThanOrEqual(N - 2000);
    expect(dropped).toBeLessThanOrEqual(N - 2000 + resentSpans);
    expect(status.services[0]).toMatchObject({
      service: 'catalog',
      at_limit: ['series'],
      dropped_series: dropped,
    });
    const m = await metrics(server);
    expect(
      valueOf(m, 'onset_cardinality_dropped_total', { kind: 'series', reason: 'service_limit' }),
    ).toBe(dropped);
    expect(await count(server, 'SELECT count(*)::int AS n FROM observations')).toBe(2000);

    // The series list answers (its latency is measured in bench/cardinality, not asserted here).
    const res = await fetch(`${server.url}/api/v1/series?service=catalog`);
    expect(res.status).toBe(200);
    const list = (await res.json()) as { series: Array<{ service: string }> };
    expect(list.series.length).toBe(1000); // the list's page size
    expect(list.series.every((s) => s.service === 'catalog')).toBe(true);

    expect(peakRss / 2 ** 20).toBeLessThan(RSS_BOUND_MB);
  }, 300_000);
});
