import type pg from 'pg';
import { withTransaction, type Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import { hideCoveredSeries } from './store-metrics.ts';

/**
 * Merge all histogram rows of each (series, resource, minute) that has
 * uncompacted rows before `beforeMs`, then rebuild the hourly rollups of the
 * hours touched, in one transaction (so every minute row is counted either
 * through its hour or, while uncompacted, directly — never twice).
 * A merged bucket count saturates at the int4 maximum (2^31-1) instead of
 * failing the whole compaction: only hostile metric points (up to 10^9
 * observations each, normalize-metrics.ts) can get there.
 *
 * First, each call is counted once when metrics came first: a row added from
 * an OTLP metric point (store-metrics.ts: `metric_from`, the start of the
 * interval it covered) whose calls spans of the same series (or, for a point
 * naming no route, of its service's view) also count is deleted — the spans
 * arrived after the point and are the exact source. Spans later than the
 * compaction of their minute (two minutes) find the minute merged.
 */
/** Uncompacted metric rows before $1 whose calls spans of the same series, arriving after them, count too. */
const SUPERSEDED_METRIC_ROWS_SQL = `DELETE FROM histograms h
  WHERE h.metric_from IS NOT NULL AND NOT h.compacted AND h.minute < $1
    AND EXISTS (SELECT 1 FROM span_durations sd
                 WHERE sd.series_id = h.series_id
                   AND sd.minute >= date_trunc('minute', h.metric_from) AND sd.minute <= h.minute)`;

/**
 * The same for metric points that name no route (metric_whole_view): covered by spans of any
 * series of their service's view. Asked step by step (these rows are few), because on Citus a
 * statement cannot join histograms with span_durations rows of other series (other shards).
 */
async function deleteCoveredWholeViewRows(
  client: pg.ClientBase,
  before: Date,
): Promise<Set<string>> {
  const emptied = new Set<string>();
  const { rows: candidates } = await client.query<{ series_id: string; from: Date; minute: Date }>(
    `SELECT DISTINCT series_id::text, date_trunc('minute', metric_from) AS from, minute FROM histograms
      WHERE metric_whole_view AND metric_from IS NOT NULL AND NOT compacted AND minute < $1`,
    [before],
  );
  const bySeries = new Map<string, Array<{ from: Date; minute: Date }>>();
  for (const c of candidates) {
    const list = bySeries.get(c.series_id) ?? [];
    list.push({ from: c.from, minute: c.minute });
    bySeries.set(c.series_id, list);
  }
  for (const [seriesId, ranges] of bySeries) {
    const { rows: siblings } = await client.query<{ id: string }>(
      `SELECT o.id::text FROM series o JOIN series m ON m.service = o.service AND m.view = o.view AND m.op = o.op
        WHERE m.id = $1`,
      [seriesId],
    );
    const lo = Math.min(...ranges.map((r) => r.from.getTime()));
    const hi = Math.max(...ranges.map((r) => r.minute.getTime()));
    const { rows: spanMinutes } = await client.query<{ minute: Date }>(
      `SELECT DISTINCT minute FROM span_durations
        WHERE series_id = ANY ($1::bigint[]) AND minute >= $2 AND minute <= $3`,
      [siblings.map((s) => s.id), new Date(lo), new Date(hi)],
    );
    const minutes = spanMinutes.map((m) => m.minute.getTime());
    for (const r of ranges) {
      if (!minutes.some((m) => m >= r.from.getTime() && m <= r.minute.getTime())) continue;
      await client.query(
        `DELETE FROM histograms WHERE series_id = $1 AND minute = $2 AND metric_whole_view AND NOT compacted
            AND metric_from IS NOT NULL AND date_trunc('minute', metric_from) = $3`,
        [seriesId, r.minute, r.from],
      );
      emptied.add(seriesId);
    }
  }
  return emptied;
}

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
  let emptied = new Set<string>();
  const merged = await withTransaction(pool, async (client) => {
    await client.query(SUPERSEDED_METRIC_ROWS_SQL, [new Date(beforeMs)]);
    emptied = await deleteCoveredWholeViewRows(client, new Date(beforeMs));
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
  // A whole-view series whose rows spans replaced holds no calls of its own: out of sight.
  await hideCoveredSeries(pool, new Set([...emptied].map(Number)));
  return merged;
}
