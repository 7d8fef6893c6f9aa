/**
 * What a server keeps of its shards' checkpoints between passes
 * (detection/stored-index.ts): a pass over shards this server fed last
 * reads no checkpoint times from regress_state (only series newer than it
 * saw), and a pass over shards another server fed in between reads them
 * again, so it misses none of the series whose states that server wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';
import { Partitions, utcDay } from '../src/db/partitions.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { runDetectionPass } from '../src/detection/engine.ts';

const MIN = 60_000;
const SERIES = 40;
const SHARDS = 4;
let url: string;
const pools: Pool[] = [];
/** SQL each connection of pool A sent. */
const sentByA: string[] = [];
let a: Pool;
let b: Pool;
const end = Math.floor(Date.now() / MIN) * MIN - 30 * MIN;

/** One minute of data for series [from, to]. */
async function minute(pool: Pool, t: number, from = 1, to = SERIES): Promise<void> {
  await pool.query(
    `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
     SELECT i, 1, to_timestamp($3::float8 / 1000), 60, 60000, 500, 5000, ARRAY[400, 410, 420], ARRAY[20, 30, 10], true
       FROM generate_series($1::int, $2::int) i`,
    [from, to, t],
  );
}

beforeAll(async () => {
  url = await createTestDatabase();
  await migrate(url);
  a = createPool(url, 4);
  b = createPool(url, 4);
  pools.push(a, b);
  a.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const q = args[0];
      sentByA.push(typeof q === 'string' ? q : String((q as { text?: string })?.text ?? ''));
      return query(...args);
    };
  });
  const days = new Set<string>();
  for (let t = end - 20 * MIN; t <= end + 20 * MIN; t += MIN) days.add(utcDay(t));
  await new Partitions(a).ensure('histograms', days);
  await a.query(
    `INSERT INTO resources (id, service, host, attrs, attrs_key) VALUES (1, 'svc', 'h', '{}'::jsonb, 'k1')`,
  );
  await a.query(
    `INSERT INTO series (service, op, view, name, peer)
     SELECT 'svc', 'request', 'server', 'GET /r/' || i, '' FROM generate_series(1, $1) i`,
    [SERIES + 5],
  );
  for (let t = end - 10 * MIN; t < end; t += MIN) await minute(a, t);
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

const readsThroughs = (sql: string[]) =>
  sql.some((q) => /FROM regress_state\s+WHERE series_id >/.test(q));

describe('checkpoint times kept between passes', () => {
  it('a pass over the shards this server fed last reads none of them again', async () => {
    const first = await runDetectionPass(a, { uptoMs: end, shardCount: SHARDS });
    expect(first.series.new).toBe(SERIES + 5);
    expect(readsThroughs(sentByA)).toBe(true);
    await minute(a, end);
    sentByA.length = 0;
    const second = await runDetectionPass(a, { uptoMs: end + MIN, shardCount: SHARDS });
    expect(second.series.total).toBe(SERIES + 5);
    expect(second.series.new).toBe(0);
    expect(second.series.fed).toBe(SERIES);
    expect(second.series.points).toBe(SERIES);
    expect(readsThroughs(sentByA)).toBe(false);
  });

  it('new series are found in shards it vouches for', async () => {
    await a.query(
      `INSERT INTO series (service, op, view, name, peer) SELECT 'svc', 'request', 'server', 'GET /new/' || i, '' FROM generate_series(1, 3) i`,
    );
    sentByA.length = 0;
    const third = await runDetectionPass(a, { uptoMs: end + 2 * MIN, shardCount: SHARDS });
    expect(third.series.new).toBe(3);
    expect(third.series.total).toBe(SERIES + 8);
    expect(readsThroughs(sentByA)).toBe(false);
  });

  it('after another server fed its shards, a pass reads their checkpoints again and misses none of its series', async () => {
    // Two series appear and server B (a takeover, or POST /api/v1/detect) feeds every shard: their states are B's.
    await a.query(
      `INSERT INTO series (service, op, view, name, peer) SELECT 'svc', 'request', 'server', 'GET /b/' || i, '' FROM generate_series(1, 2) i`,
    );
    await minute(a, end + 2 * MIN);
    await minute(a, end + 3 * MIN);
    const byB = await runDetectionPass(b, { uptoMs: end + 4 * MIN, shardCount: SHARDS });
    expect(byB.series.new).toBe(2);
    sentByA.length = 0;
    await minute(a, end + 4 * MIN);
    const afterB = await runDetectionPass(a, { uptoMs: end + 5 * MIN, shardCount: SHARDS });
    expect(readsThroughs(sentByA)).toBe(true);
    // B's two series have states, so they are not new: A finds them only by reading the checkpoints.
    expect(afterB.series.total).toBe(SERIES + 10);
    expect(afterB.series.new).toBe(0);
    // And the pass after that trusts its own marks again.
    await minute(a, end + 5 * MIN);
    sentByA.length = 0;
    const next = await runDetectionPass(a, { uptoMs: end + 6 * MIN, shardCount: SHARDS });
    expect(next.series.total).toBe(SERIES + 10);
    expect(next.series.points).toBe(SERIES);
    expect(readsThroughs(sentByA)).toBe(false);
  });
});
