/**
 * retention.test.ts on a Citus cluster, its assertions unchanged (suite.ts), and what retention
 * means there (docs/citus.md "Retention"): the one `DROP TABLE` of a day partition on the
 * coordinator drops that day's shards on every worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { citusMissing } from '@onset/testkit/citus';
import { Partitions, utcDay } from '../../src/db/partitions.ts';
import { citusSuite } from './suite.ts';

await citusSuite('../retention.test.ts', () => import('../retention.test.ts'));

const missing = citusMissing();

describe.skipIf(missing)('day partitions past retention on a Citus cluster', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Shard tables of `name` on each worker (its shards are `<name>_<shardid>`). */
  async function shardTablesPerWorker(name: string): Promise<number[]> {
    const { rows } = await server.onset.pool.query<{ result: string; success: boolean }>(
      `SELECT success, result FROM run_command_on_workers(
         format($$SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p') AND relname ~ %L$$,
                '^' || $1::text || '_[0-9]+$'))`,
      [name],
    );
    expect(rows.every((r) => r.success)).toBe(true);
    return rows.map((r) => Number(r.result));
  }

  it('drops an old day on every worker and keeps the recent ones there', async () => {
    const parts = new Partitions(server.onset.pool);
    const day = 86_400_000;
    const now = Date.now();
    const old = utcDay(now - 6 * day).replaceAll('-', '');
    const today = utcDay(now).replaceAll('-', '');
    for (const t of ['observations', 'histograms', 'span_durations'] as const)
      await parts.ensure(t, [utcDay(now - 6 * day), utcDay(now)]);
    for (const t of ['observations', 'histograms', 'span_durations']) {
      const before = await shardTablesPerWorker(`${t}_p${old}`);
      expect(before).toHaveLength(2);
      expect(before.every((n) => n > 0)).toBe(true);
    }
    const dropped = [
      ...(await parts.dropOlderThan('observations', now - 48 * 3_600_000)),
      ...(await parts.dropOlderThan('histograms', now - 48 * 3_600_000)),
      ...(await parts.dropOlderThan('span_durations', now - 48 * 3_600_000)),
    ];
    expect(dropped).toEqual(
      ['observations', 'histograms', 'span_durations'].map((t) => `${t}_p${old}`),
    );
    for (const t of ['observations', 'histograms', 'span_durations']) {
      expect(await shardTablesPerWorker(`${t}_p${old}`)).toEqual([0, 0]);
      expect((await shardTablesPerWorker(`${t}_p${today}`)).every((n) => n > 0)).toBe(true);
    }
    const { rows } = await server.onset.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM citus_shards WHERE table_name::text LIKE '%\\_p' || $1`,
      [old],
    );
    expect(rows[0]!.n).toBe(0);
  });
});
