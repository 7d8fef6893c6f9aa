import type { Pool } from '../db/pool.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';

/**
 * Housekeeping run every minute by the scheduler:
 * - make sure today's and tomorrow's partitions exist,
 * - drop partitions past retention (whole tables, never row deletes),
 * - fold the per-request histogram rows of closed minutes into one row each.
 */
export async function runMaintenance(
  pool: Pool,
  partitions: Partitions,
  opts: { rawRetentionMs: number; histogramRetentionMs: number },
  now = Date.now(),
): Promise<{ dropped: string[]; compacted: number }> {
  const days = [utcDay(now), utcDay(now + 86_400_000)];
  await partitions.ensure('observations', days);
  await partitions.ensure('histograms', days);
  const dropped = [
    ...(await partitions.dropOlderThan('observations', now - opts.rawRetentionMs)),
    ...(await partitions.dropOlderThan('histograms', now - opts.histogramRetentionMs)),
  ];
  const compacted = await compactHistograms(pool, now - 120_000);
  return { dropped, compacted };
}

/** Merge all histogram rows of each (series, resource, minute) that has uncompacted rows before `beforeMs`. */
export async function compactHistograms(pool: Pool, beforeMs: number): Promise<number> {
  const res = await pool.query(
    `WITH keys AS (
       SELECT DISTINCT series_id, resource_id, minute FROM histograms
        WHERE NOT compacted AND minute < $1 LIMIT 20000
     ), doomed AS (
       DELETE FROM histograms h USING keys k
        WHERE h.series_id = k.series_id AND h.resource_id = k.resource_id AND h.minute = k.minute
       RETURNING h.*
     ), agg AS (
       SELECT series_id, resource_id, minute, sum(count)::int8 AS count, sum(sum_us) AS sum_us,
              min(min_us) AS min_us, max(max_us) AS max_us
         FROM doomed GROUP BY 1, 2, 3
     ), buckets AS (
       SELECT d.series_id, d.resource_id, d.minute, b.i, sum(b.c)::int AS c
         FROM doomed d, unnest(d.idx, d.cnt) AS b(i, c) GROUP BY 1, 2, 3, 4
     ), arrays AS (
       SELECT series_id, resource_id, minute, array_agg(i ORDER BY i) AS idx, array_agg(c ORDER BY i) AS cnt
         FROM buckets GROUP BY 1, 2, 3
     )
     INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
     SELECT a.series_id, a.resource_id, a.minute, a.count, a.sum_us, a.min_us, a.max_us, r.idx, r.cnt, true
       FROM agg a JOIN arrays r USING (series_id, resource_id, minute)`,
    [new Date(beforeMs)],
  );
  return res.rowCount ?? 0;
}
