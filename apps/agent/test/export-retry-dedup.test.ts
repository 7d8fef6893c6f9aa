/**
 * The report this test answers: on a loaded server the agent's exports timed
 * out, were sent again, and their spans were counted twice. Here two real
 * agents (the official OTLP exporter behind the agent's own queue and retry)
 * export to a real server whose PostgreSQL cannot commit for a few seconds:
 * a session holds a lock on `histograms`, so every ingest transaction has
 * already put its spans into `observations` (uncommitted) when it stops. The
 * exports time out at the client and are sent again while the first attempts
 * are still in flight, some of them later in one group-commit transaction with
 * new spans of the other agent. Once the lock goes, what a user reads must
 * count every span once: the series' counts, an SLO counted incrementally
 * while it happened, and an SLO created afterwards from the stored history.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { SpawnEvent } from '../src/events.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries } from './helpers/onset.ts';
import { startTestTimeRelay, TestClock } from './live/helpers/test-time.ts';

let server: TestServer;
let db: pg.Client;
const agents: TestAgent[] = [];

beforeAll(async () => {
  server = await startTestServer();
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  await db?.end().catch(() => {});
  await server?.close();
});

const PER_AGENT = 240;
/** Half the spans are good against the SLOs' 5 ms threshold. */
const GOOD_MS = 1;
const BAD_MS = 10;

function spawnEvent(label: string, i: number, startMs: number): SpawnEvent {
  return {
    kind: 'spawn',
    source: 'probe',
    label,
    executable: '/bin/true',
    startNs: BigInt(startMs + i) * 1_000_000n,
    durationNs: (i % 2 ? GOOD_MS : BAD_MS) * 1_000_000,
  };
}

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, any>;
}

/** Sum of the per-minute counts the quantiles API gives for the series named `label`. */
async function seriesCount(service: string, label: string): Promise<number> {
  const s = (await listSeries(server.url, { service, op: 'spawn' })).find((x) => x.name === label);
  if (!s) return 0;
  const { points } = (await api(
    'GET',
    `/api/v1/series/${s.id}/quantiles?from=now-1d&to=now&step=1m&q=0.5`,
  )) as { points: { count: number }[] };
  return points.reduce((n, p) => n + p.count, 0);
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

const sloSpec = (name: string, service: string) => ({
  name,
  service,
  op: 'spawn',
  view: 'internal',
  name_match: '^retried$',
  threshold_ms: 5,
  objective: 0.99,
  window: '1d',
});

/**
 * Two agents export to `endpoint` while every ingest commit is stalled, time out, send again,
 * and deliver once the stall ends; then what a user reads must count each span once.
 */
async function stallAndResend(endpoint: string, services: string[]): Promise<void> {
  const mine: TestAgent[] = [];
  for (const service of services) {
    const ta = await startTestAgent({
      flags: { endpoint, serviceName: service, bpftrace: false, strace: false },
      tune: (c) => {
        c.export.timeoutMs = 1_000;
        c.export.flushIntervalMs = 50;
        c.export.batchSize = 60;
      },
    });
    agents.push(ta);
    mine.push(ta);
  }
  // Series, resources and the partitions exist before the database stalls.
  const warmAt = Date.now() - 60_000;
  for (const ta of mine) ta.agent.record(spawnEvent('warm-up', 0, warmAt));
  for (const ta of mine) await ta.agent.flush();
  for (const ta of mine) expect(ta.agent.stats).toMatchObject({ exported: 1, queued: 0 });
  // One SLO counts incrementally while it happens (POST /slos/evaluate), like the scheduler.
  const live = await api('POST', '/api/v1/slos', sloSpec(`${services[0]} during`, services[0]!));
  const duplicatesBefore = await metric('onset_ingest_duplicates_total', 'kind="spans"');

  // PostgreSQL stalls every ingest commit: the spans are in observations, not yet committed.
  await db.query('BEGIN');
  await db.query('LOCK TABLE histograms IN SHARE MODE');
  const startMs = Date.now() - 30_000;
  for (let i = 0; i < PER_AGENT; i++)
    for (const ta of mine) ta.agent.record(spawnEvent('retried', i, startMs));
  // The exports time out (1 s) and go again after the agent's backoff, while the first
  // attempts still wait in the server.
  const deadline = Date.now() + 30_000;
  while (mine.some((ta) => ta.agent.stats.failedExports < 3)) {
    if (Date.now() > deadline) throw new Error('the exports never timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
  const waiting = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  expect(waiting.rows[0]!.n, 'ingest transactions waiting on the stalled commit').toBeGreaterThan(
    0,
  );
  // The SLO pass runs meanwhile, as the scheduler's would: it must not move past the stalled rows.
  await api('POST', '/api/v1/slos/evaluate', {});
  await db.query('COMMIT');

  const drained = Date.now() + 60_000;
  while (mine.some((ta) => ta.agent.stats.exported < PER_AGENT + 1 || ta.agent.stats.queued)) {
    if (Date.now() > drained)
      throw new Error(`not delivered: ${JSON.stringify(mine.map((a) => a.agent.stats))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const ta of mine) await ta.agent.flush();

  for (const service of services)
    expect(await seriesCount(service, 'retried'), `${service} count`).toBe(PER_AGENT);

  await new Promise((r) => setTimeout(r, 300)); // the SLO counting cursor trails the clock by 250 ms
  await api('POST', '/api/v1/slos/evaluate', {});
  const during = (await api('GET', `/api/v1/slos/${live.id}`)).status;
  expect(during).toMatchObject({ good: PER_AGENT / 2, total: PER_AGENT });
  const after = (await api('POST', '/api/v1/slos', sloSpec(`${services[1]} after`, services[1]!)))
    .status;
  expect(after).toMatchObject({ good: PER_AGENT / 2, total: PER_AGENT });

  const { rows } = await db.query<{ spans: number; distinct: number; durations: number }>(
    `SELECT (SELECT count(*)::int FROM observations o JOIN series s ON s.id = o.series_id
              WHERE s.service = ANY($1)) AS spans,
            (SELECT count(DISTINCT (o.trace_id, o.span_id))::int FROM observations o
               JOIN series s ON s.id = o.series_id WHERE s.service = ANY($1)) AS distinct,
            (SELECT sum(cardinality(d.durations))::int FROM span_durations d
               JOIN series s ON s.id = d.series_id WHERE s.service = ANY($1)) AS durations`,
    [services],
  );
  const sent = services.length * (PER_AGENT + 1);
  expect(rows[0]).toEqual({ spans: sent, distinct: sent, durations: sent });
  // The server did get spans it already had (the re-sent attempts) and skipped them.
  expect(
    await metric('onset_ingest_duplicates_total', 'kind="spans"'),
    'retries reached the server',
  ).toBeGreaterThan(duplicatesBefore);
}

describe('exports that time out while the server has not committed', () => {
  it('are sent again and every span is still counted once (series, SLO counters, SLO history)', async () => {
    await stallAndResend(server.otlpUrl, ['dup-a', 'dup-b']);
  });

  it('are counted once when they go through the live suite’s test-time relay', async () => {
    // The live runs where the report came from: agent -> relay (moves spans to test time,
    // hours in the past) -> server. A re-sent export must arrive with the same ids and times.
    const relay = await startTestTimeRelay(new TestClock({ maxMinutes: 30 }), server.otlpUrl);
    try {
      await stallAndResend(relay.url, ['relay-a', 'relay-b']);
    } finally {
      await relay.close();
    }
  });
});
