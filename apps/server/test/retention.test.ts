import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Partitions, utcDay } from '../src/db/partitions.ts';
import { compactHistograms } from '../src/otlp/compact.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function partitionsOf(table: string): Promise<string[]> {
  const { rows } = await server.onset.pool.query(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = $1 ORDER BY 1`,
    [table],
  );
  return rows.map((r) => r.relname);
}

describe('retention and compaction', () => {
  it('drops whole raw partitions past retention and keeps recent ones', async () => {
    const parts = new Partitions(server.onset.pool);
    const day = 86_400_000;
    const now = Date.now();
    await parts.ensure('observations', [utcDay(now - 5 * day), utcDay(now - day), utcDay(now)]);
    const dropped = await parts.dropOlderThan('observations', now - 48 * 3_600_000);
    expect(dropped).toEqual([`observations_p${utcDay(now - 5 * day).replaceAll('-', '')}`]);
    const left = await partitionsOf('observations');
    expect(left).toContain(`observations_p${utcDay(now).replaceAll('-', '')}`);
    expect(left).toContain(`observations_p${utcDay(now - day).replaceAll('-', '')}`);
  });

  it('folds the per-request rows of a closed minute into one, keeping the counts', async () => {
    const minute = Math.floor((Date.now() - 10 * 60_000) / 60_000) * 60_000;
    for (let r = 0; r < 3; r++) {
      const start = BigInt(minute + r * 1000) * 1_000_000n;
      const res = await fetch(`${server.otlpUrl}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          resourceSpans: [
            {
              resource: {
                attributes: [{ key: 'service.name', value: { stringValue: 'compact' } }],
              },
              scopeSpans: [
                {
                  spans: [1, 2].map((k) => ({
                    traceId: `${r + 1}`.padStart(32, 'a'),
                    spanId: `${k}`.padStart(16, 'b'),
                    name: 'fsync',
                    startTimeUnixNano: String(start),
                    endTimeUnixNano: String(start + BigInt(k) * 1_000_000n),
                  })),
                },
              ],
            },
          ],
        }),
      });
      expect(res.status).toBe(200);
    }
    const q = `SELECT count(*)::int AS rows, sum(count)::int AS n FROM histograms h JOIN series s ON s.id = h.series_id WHERE s.service = 'compact'`;
    expect((await server.onset.pool.query(q)).rows[0]).toEqual({ rows: 3, n: 6 });
    await compactHistograms(
      server.onset.pool,
      new Partitions(server.onset.pool),
      Date.now() - 120_000,
    );
    expect((await server.onset.pool.query(q)).rows[0]).toEqual({ rows: 1, n: 6 });
    const { rows } = await server.onset.pool.query(
      `SELECT idx, cnt FROM histograms h JOIN series s ON s.id = h.series_id WHERE s.service = 'compact'`,
    );
    expect(rows[0].cnt).toEqual([3, 3]);
  });

  it('a bucket that sums past the int4 maximum saturates instead of failing compaction', async () => {
    const minute = Math.floor((Date.now() - 10 * 60_000) / 60_000) * 60_000;
    const point = (k: number) => ({
      timeUnixNano: String(BigInt(minute + k * 1000) * 1_000_000n),
      count: '1000000000',
      bucketCounts: ['0', '1000000000'],
      explicitBounds: [5],
      min: 7, // every observation at 7 ms: one Onset bucket holds them all
      max: 7,
    });
    const res = await fetch(`${server.otlpUrl}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceMetrics: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'saturate' } }] },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'fsync.duration',
                    unit: 'ms',
                    histogram: { aggregationTemporality: 1, dataPoints: [1, 2, 3].map(point) },
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    await compactHistograms(
      server.onset.pool,
      new Partitions(server.onset.pool),
      Date.now() - 120_000,
    );
    const { rows } = await server.onset.pool.query(
      `SELECT h.count::text AS count, h.cnt FROM histograms h JOIN series s ON s.id = h.series_id WHERE s.service = 'saturate'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].count).toBe('3000000000');
    expect(Math.max(...rows[0].cnt)).toBe(2147483647);
    const hourly = await server.onset.pool.query(
      `SELECT h.cnt FROM histograms_hourly h JOIN series s ON s.id = h.series_id WHERE s.service = 'saturate'`,
    );
    expect(Math.max(...hourly.rows[0].cnt)).toBe(2147483647);
  });
});
