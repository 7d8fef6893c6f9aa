import { withTransaction, type Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';

/**
 * Merge all histogram rows of each (series, resource, minute) that has
 * uncompacted rows before `beforeMs`, then rebuild the hourly rollups of the
 * hours touched, in one transaction (so every minute row is counted either
 * through its hour or, while uncompacted, directly — never twice).
 * A merged bucket count saturates at the int4 maximum (2^31-1) instead of
 * failing the whole compaction: only hostile metric points (up to 10^9
 * observations each, normalize-metrics.ts) can get there.
 */
export async function compactHistograms(
  pool: Pool,
  partitions: Partitions,
  beforeMs: number,
): Promise<number> {
  const { rows: hours } = await pool.query<{ day: string }>(
    `SELECT DISTINCT to_char(minute AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM histograms WHERE NOT compacted AND minute < $1`,
    [new Date(beforeMs)],
  );
  if (!hours.length) return 0;
  await partitions.ensure(
    'histograms_hourly',
    hours.map((h) => h.day),
  );
  return withTransaction(pool, async (client) => {
    await client.query(
      `CREATE TEMP TABLE touched_keys ON COMMIT DROP AS
       SELECT DISTINCT series_id, resource_id, minute FROM histograms
        WHERE NOT compacted AND minute < $1 LIMIT 50000`,
      [new Date(beforeMs)],
    );
    // Planner statistics for the temp table: without them the joins below go nested-loop.
    await client.query('ANALYZE touched_keys');
    const res = await client.query(
      `WITH keys AS (SELECT * FROM touched_keys
), doomed AS (
       DELETE FROM histograms h USING keys k
        WHERE h.series_id = k.series_id AND h.resource_id = k.resource_id AND h.minute = k.minute
       RETURNING h.*
     ), agg AS (
       SELECT series_id, resource_id, minute, sum(count)::int8 AS count, sum(sum_us) AS sum_us,
              min(min_us) AS min_us, max(max_us) AS max_us
         FROM doomed GROUP BY 1, 2, 3
     ), buckets AS (
       SELECT d.series_id, d.resource_id, d.minute, b.i, LEAST(sum(b.c), 2147483647)::int AS c
         FROM doomed d, unnest(d.idx, d.cnt) AS b(i, c) GROUP BY 1, 2, 3, 4
     ), arrays AS (
       SELECT series_id, resource_id, minute, array_agg(i ORDER BY i) AS idx, array_agg(c ORDER BY i) AS cnt
         FROM buckets GROUP BY 1, 2, 3
     )
     INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
     SELECT a.series_id, a.resource_id, a.minute, a.count, a.sum_us, a.min_us, a.max_us, r.idx, r.cnt, true
       FROM agg a JOIN arrays r USING (series_id, resource_id, minute)`,
    );
    await client.query(
      `WITH hours AS (
       SELECT DISTINCT series_id, resource_id, date_trunc('hour', minute) AS hour FROM touched_keys
     ), src AS (
       SELECT h.* , t.hour FROM histograms h JOIN hours t
         ON h.series_id = t.series_id AND h.resource_id = t.resource_id
        AND h.minute >= t.hour AND h.minute < t.hour + interval '1 hour' AND h.compacted
     ), agg AS (
       SELECT series_id, resource_id, hour, sum(count)::int8 AS count, sum(sum_us) AS sum_us,
              min(min_us) AS min_us, max(max_us) AS max_us FROM src GROUP BY 1, 2, 3
     ), buckets AS (
       SELECT s.series_id, s.resource_id, s.hour, b.i, LEAST(sum(b.c), 2147483647)::int AS c
         FROM src s, unnest(s.idx, s.cnt) AS b(i, c) GROUP BY 1, 2, 3, 4
     ), arrays AS (
       SELECT series_id, resource_id, hour, array_agg(i ORDER BY i) AS idx, array_agg(c ORDER BY i) AS cnt
         FROM buckets GROUP BY 1, 2, 3
     )
     INSERT INTO histograms_hourly (series_id, resource_id, hour, count, sum_us, min_us, max_us, idx, cnt)
     SELECT a.series_id, a.resource_id, a.hour, a.count, a.sum_us, a.min_us, a.max_us, r.idx, r.cnt
       FROM agg a JOIN arrays r USING (series_id, resource_id, hour)
     ON CONFLICT (series_id, resource_id, hour) DO UPDATE SET count = EXCLUDED.count, sum_us = EXCLUDED.sum_us,
       min_us = EXCLUDED.min_us, max_us = EXCLUDED.max_us, idx = EXCLUDED.idx, cnt = EXCLUDED.cnt`,
    );
    return res.rowCount ?? 0;
  });
}
