/**
 * How spans fold into `histograms` and `span_durations` in SQL, for every path that folds them
 * in PostgreSQL rather than in the server (span-folds.ts): the deduplicating and the staged
 * statements of write-spans.ts, and a fold mark's recovery (fold-journal.ts). `source` is a
 * relation or CTE of (series_id, resource_id, start_time, duration_us); onset_bucket is core's
 * bucketIndex.
 */

/** The CTE `b`: `source`'s spans counted per (series, resource, minute, bucket). */
export const bucketsOf = (source: string) => `b AS (
   SELECT series_id, resource_id, date_trunc('minute', start_time) AS minute, onset_bucket(duration_us) AS i,
          count(*)::int AS c, sum(duration_us) AS s, min(duration_us) AS mn, max(duration_us) AS mx
     FROM ${source} GROUP BY 1, 2, 3, 4
 )`;

/** One histogram row per (series, resource, minute) of `b`. */
export const HISTOGRAMS_FROM_BUCKETS = `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
 SELECT series_id, resource_id, minute, sum(c), sum(s), min(mn), max(mx),
        array_agg(i ORDER BY i), array_agg(c ORDER BY i)
   FROM b GROUP BY 1, 2, 3`;

/** One ascending durations array per (series, minute) of `source`, received on `day` (SQL). */
export const durationsOf = (source: string, day: string) =>
  `INSERT INTO span_durations (received_day, series_id, minute, durations, sorted)
   SELECT ${day}, series_id, date_trunc('minute', start_time), array_agg(duration_us ORDER BY duration_us), true
     FROM ${source} GROUP BY 2, 3`;
