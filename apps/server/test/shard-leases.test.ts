/**
 * Detection shard leases (detection/shards.ts) on a real PostgreSQL:
 * servers split the shards evenly, a server that stops renewing (as after
 * SIGKILL) loses its leases within the TTL and another takes them, a server
 * that joins gets its share, and one that stops cleanly gives its shards
 * back at once. The series each one owns add up to the series count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { ShardLeases, clusterShardCount } from '../src/detection/shards.ts';

const TTL = 1500;
const SERIES = 1000;
let url: string;
const pools: Pool[] = [];

function server(id: string, shards = 16): ShardLeases {
  const pool = createPool(url, 3);
  pools.push(pool);
  return new ShardLeases(pool, { shards, ttlMs: TTL, serverId: id });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Renew in turns until no server's holding changes (a rebalance takes two rounds). */
async function settle(servers: ShardLeases[]): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const before = servers.map((s) => s.owned.join(',')).join('|');
    for (const s of servers) await s.renew();
    if (servers.map((s) => s.owned.join(',')).join('|') === before && round > 0) return;
  }
}

function expectSplit(servers: ShardLeases[], count: number): void {
  const all = servers.flatMap((s) => s.owned).sort((a, b) => a - b);
  expect(all).toEqual(Array.from({ length: count }, (_, i) => i));
  const shares = servers.map((s) => s.owned.length);
  expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
  for (const s of servers) expect(s.seriesOwned).toBeGreaterThan(0);
  expect(servers.reduce((n, s) => n + s.seriesOwned, 0)).toBe(SERIES);
}

beforeAll(async () => {
  url = await createTestDatabase();
  await migrate(url);
  const pool = createPool(url, 1);
  pools.push(pool);
  await pool.query(
    `INSERT INTO series (service, op, view, name, peer)
     SELECT 'svc-' || (i % 7), 'request', 'server', 'GET /r/' || i, '' FROM generate_series(1, $1) i`,
    [SERIES],
  );
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

describe('detection shard leases', () => {
  const a = () => servers.a!;
  const servers: Record<string, ShardLeases> = {};

  it('two servers split the shards evenly; their series add up to the series count', async () => {
    servers.a = server('a');
    servers.b = server('b', 99); // the cluster's count is the first server's
    await settle([servers.a, servers.b]);
    expect(a().count).toBe(16);
    expect(servers.b.count).toBe(16);
    expectSplit([servers.a, servers.b], 16);
    expect(a().owned).toHaveLength(8);
  });

  it('a server that stops renewing (killed) loses its shards within the TTL, and the other takes them', async () => {
    await servers.b!.stop(false);
    await a().renew();
    expect(a().owned).toHaveLength(8); // not yet: b's leases are still current
    await sleep(TTL + 100);
    await a().renew();
    expect(a().owned).toHaveLength(16);
    expect(a().members).toBe(1);
    expect(a().seriesOwned).toBe(SERIES);
  });

  it('a server joining gets a fair share; one stopping cleanly hands its shards over at once', async () => {
    servers.c = server('c');
    servers.d = server('d');
    await settle([a(), servers.c, servers.d]);
    expectSplit([a(), servers.c, servers.d], 16);
    await servers.d.stop();
    await settle([a(), servers.c]);
    expectSplit([a(), servers.c], 16);
  });

  it('a pass without any server creates the shards once, with the configured count', async () => {
    const pool = createPool(url, 1);
    pools.push(pool);
    const c = await pool.connect();
    try {
      expect(await clusterShardCount(c, 5)).toBe(16);
    } finally {
      c.release();
    }
  });
});
