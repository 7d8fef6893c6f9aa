/**
 * Detection shared across servers (docs/scaling.md "N servers on one
 * PostgreSQL"), with two real server processes on one embedded PostgreSQL:
 * each leases a share of the detection shards (their series add up to the
 * series count, in GET /api/v1/detect and in /metrics), their passes over
 * their own shards together open each incident of the replay exactly once,
 * and after one of them is SIGKILLed the other takes its shards within the
 * lease TTL and carries on from the checkpoints: nothing opened twice,
 * nothing lost, every regression updated with the new data.
 *
 * History is replayed (40-minute windows in seconds) while the test holds
 * every shard's lock, as a backfill would: the servers' own minute passes
 * skip locked shards instead of moving series past minutes still arriving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startServerProcess, type ServerProcess } from '@onset/testkit';
import {
  incidentTimes,
  replayIncidents,
  REPLAY_MEMBERS,
  REPLAY_REGRESSIONS,
} from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { createPool, type Pool, type PoolClient } from '../src/db/pool.ts';
import { SHARD_LOCK_CLASS } from '../src/detection/lock.ts';

const SHARDS = 8;
const TTL_S = 3;
const times = incidentTimes();

type Proc = ServerProcess;

interface Shards {
  server: string;
  count: number;
  owned: number[];
  series_owned: number;
  servers: number;
}

interface DetectAnswer {
  detection: {
    shards: { count: number; run: number };
    series: { total: number };
    regressions: { opened: number };
  };
}

let databaseUrl: string;
let pool: Pool;
let a: Proc;
let b: Proc;
let phase1: Regression[] = [];

function startServer(): Promise<Proc> {
  return startServerProcess(databaseUrl, {
    ONSET_DETECT_SHARDS: String(SHARDS),
    ONSET_DETECT_LEASE_TTL: `${TTL_S}s`,
    // No scheduled pass during the test: one between the replay's two phases moved every series
    // of its shards past the minutes phase 2 then replayed, so those never reached a detector
    // (the test's own passes run those minutes; the leases renew on their own).
    ONSET_DETECT_INTERVAL: '1h',
  });
}

async function shardsOf(p: Proc): Promise<Shards> {
  const res = await fetch(`${p.url}/api/v1/detect`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { shards: Shards }).shards;
}

/** The value of a gauge without labels in a server's /metrics. */
async function gauge(p: Proc, name: string): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  expect(line, `${name} in /metrics`).toBeTruthy();
  return Number(line!.split(' ')[1]);
}

async function seriesCount(): Promise<number> {
  return (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM series`)).rows[0]!.n;
}

/** Poll until `check` passes (leases renew every TTL/3), at most `ms`. */
async function eventually(check: () => Promise<void>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function detectOwned(p: Proc, body: object = {}): Promise<DetectAnswer> {
  const res = await fetch(`${p.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, shards: 'owned' }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as DetectAnswer;
}

/** Replay while holding every shard's lock (scheduled passes skip them meanwhile). */
async function replayHeld(phase: 1 | 2, via: Proc): Promise<void> {
  const c: PoolClient = await pool.connect();
  try {
    await c.query(`SELECT pg_advisory_lock($1, s) FROM generate_series(0, $2 - 1) s`, [
      SHARD_LOCK_CLASS,
      SHARDS,
    ]);
    await replayIncidents({ otlpUrl: via.otlpUrl, apiUrl: via.url, times, phase });
  } finally {
    await c.query(`SELECT pg_advisory_unlock_all()`);
    c.release();
  }
}

async function regressions(p: Proc): Promise<Regression[]> {
  const res = await fetch(`${p.url}/api/v1/regressions`);
  return ((await res.json()) as { regressions: Regression[] }).regressions;
}

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  a = await startServer();
  b = await startServer();
  pool = createPool(databaseUrl, 2);
  await replayHeld(1, a);
}, 180_000);

afterAll(async () => {
  for (const p of [a, b]) p?.proc.kill('SIGKILL');
  await pool?.end();
});

describe('two servers on one PostgreSQL', () => {
  it('each leases a share of the shards; the series they own add up to the series count', async () => {
    const total = await seriesCount();
    expect(total).toBeGreaterThan(10);
    await eventually(async () => {
      const [sa, sb] = [await shardsOf(a), await shardsOf(b)];
      expect(sa.count).toBe(SHARDS);
      expect(sa.servers).toBe(2);
      expect(sa.owned).toHaveLength(SHARDS / 2);
      expect(sb.owned).toHaveLength(SHARDS / 2);
      expect([...sa.owned, ...sb.owned].sort((x, y) => x - y)).toEqual([...Array(SHARDS).keys()]);
      expect(sa.series_owned).toBeGreaterThan(0);
      expect(sb.series_owned).toBeGreaterThan(0);
      expect(sa.series_owned + sb.series_owned).toBe(total);
      const [ga, gb] = [
        await gauge(a, 'onset_detection_series_owned'),
        await gauge(b, 'onset_detection_series_owned'),
      ];
      expect(ga).toBeGreaterThan(0);
      expect(gb).toBeGreaterThan(0);
      expect(ga + gb).toBe(total);
      expect(await gauge(a, 'onset_detection_shards_owned')).toBe(SHARDS / 2);
    });
  }, 60_000);

  it('their passes over their own shards, at once, open each incident exactly once', async () => {
    const upto = new Date(times.endMs).toISOString();
    const [ra, rb] = await Promise.all([detectOwned(a, { upto }), detectOwned(b, { upto })]);
    for (const r of [ra, rb]) {
      expect(r.detection.shards).toEqual({ count: SHARDS, run: SHARDS / 2 });
      expect(r.detection.series.total).toBeGreaterThan(0);
    }
    phase1 = await regressions(a);
    expect(phase1.map((r) => `${r.service}/${r.view}`).sort()).toEqual([...REPLAY_REGRESSIONS]);
    expect(phase1.flatMap((r) => r.members.map((m) => `${m.service}/${m.view}`)).sort()).toEqual([
      ...REPLAY_MEMBERS,
    ]);
    // The incident on the checkout edge spans series that the two servers' shards split or not:
    // either way one regression. Passing again adds nothing.
    const again = await Promise.all([detectOwned(a, { upto }), detectOwned(b, { upto })]);
    expect(again.map((r) => r.detection.regressions.opened)).toEqual([0, 0]);
    expect((await regressions(b)).map((r) => r.id).sort()).toEqual(phase1.map((r) => r.id).sort());
  }, 120_000);

  it('after one is SIGKILLed the other takes its shards within the TTL and carries on from the checkpoints', async () => {
    const before = await shardsOf(b);
    b.proc.kill('SIGKILL');
    const killedAt = Date.now();
    await replayHeld(2, a);
    const replayedAt = Date.now();
    const total = await seriesCount();
    await eventually(async () => {
      const s = await shardsOf(a);
      expect(s.owned).toEqual([...Array(SHARDS).keys()]);
      expect(s.servers).toBe(1);
      expect(s.series_owned).toBe(total);
      expect(await gauge(a, 'onset_detection_series_owned')).toBe(total);
    }, 30_000);
    // Lapsed after the TTL and taken at the next renewal (TTL / 3), with slack for a loaded machine.
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect(before.owned.length).toBe(SHARDS / 2);
    // Pairing takes arrivals only up to the oldest open transaction (pass.ts settledArrivalMs): a
    // statement the killed server had running goes on until PostgreSQL notices, and until then the
    // replay's new client/server pairs wait (a CI run's checkout/gap got no new minutes that way).
    await eventually(async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()
            AND backend_type = 'client backend' AND xact_start < to_timestamp($1 / 1000.0)`,
        [replayedAt],
      );
      expect(rows[0]!.n, 'transactions older than the replay').toBe(0);
    }, 60_000);

    const r = await detectOwned(a);
    expect(r.detection.shards).toEqual({ count: SHARDS, run: SHARDS });
    const later = await regressions(a);
    expect(later.map((x) => x.id).sort()).toEqual(phase1.map((x) => x.id).sort());
    for (const x of later) {
      const was = phase1.find((p) => p.id === x.id)!;
      expect(x.onset).toBe(was.onset);
      expect(x.members.map((m) => m.series_id)).toEqual(was.members.map((m) => m.series_id));
      expect(x.after.count, `${x.service}/${x.view} updated`).toBeGreaterThan(was.after.count);
    }
    // The rolled-back incident resolves; the others stay open.
    expect(later.find((x) => x.service === 'postgres')!.status).toBe('resolved');
    expect(
      later
        .filter((x) => x.status === 'open')
        .map((x) => x.service)
        .sort(),
    ).toEqual(['builder', 'checkout', 'containerd', 'pageserver']);
    expect(a.output()).not.toMatch(/"level":(50|60)/);
  }, 180_000);
});
