/**
 * Minute histograms written from outside ingest: the edge series that pairing
 * derives from spans (edges/pairing.ts). The `histograms` table is otlp/'s
 * (db/owners.ts); this is its one entry for such a writer.
 */
import type { Histogram } from '@onset/core';
import type { Queryable } from '../db/pool.ts';

export interface MinuteHistogram {
  seriesId: number;
  resourceId: number;
  minuteMs: number;
  h: Histogram;
}

/** Appends one row per histogram (the caller has ensured the day partitions). */
export async function insertMinuteHistograms(
  db: Queryable,
  list: MinuteHistogram[],
): Promise<void> {
  if (!list.length) return;
  await db.query(
    `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
       SELECT s, r, to_timestamp(m / 1000.0), n, su, mn, mx, i::int[], k::int[]
         FROM unnest($1::bigint[], $2::bigint[], $3::float8[], $4::bigint[], $5::float8[], $6::float8[], $7::float8[],
                     $8::text[], $9::text[]) AS u(s, r, m, n, su, mn, mx, i, k)`,
    [
      list.map((g) => g.seriesId),
      list.map((g) => g.resourceId),
      list.map((g) => g.minuteMs),
      list.map((g) => g.h.count),
      list.map((g) => g.h.sum),
      list.map((g) => g.h.min),
      list.map((g) => g.h.max),
      list.map((g) => `{${g.h.toSparse().idx.join(',')}}`),
      list.map((g) => `{${g.h.toSparse().cnt.join(',')}}`),
    ],
  );
}
