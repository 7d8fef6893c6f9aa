import { COVERED_BY_SPANS, resourceKey, seriesKey, type Registry } from './registry.ts';
import { admitObservations } from '../cardinality/admit.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import type { MetricPoint } from './normalize-metrics.ts';
import { placeNative, subtractNative, type NativeHistogram } from './native-histogram.ts';

/** First key of the per-stream advisory locks (second key: hashtext of the stream key). */
const METRIC_STREAM_LOCK_CLASS = 0x0de7ed1;
/** `metric_streams.layout` of a delta stream: no buckets kept, only its latest intervals. */
const DELTA_LAYOUT = 'delta';
/** Intervals remembered per delta stream (a retried batch may hold several of one stream). */
const DELTA_INTERVALS_KEPT = 64;

const toMicros = (ms: number) => Math.round(ms * 1000);
/** A series with spans this long before a metric point counts its calls from the spans. */
const SPANS_PREFERRED_MS = 60 * 60_000;

/** Key of a service's calls of one view and op: what a whole-view metric point stands for. */
const viewKey = (s: { service: string; view: string; op: string }) =>
  `${s.service}\u0001${s.view}\u0001${s.op}`;

/** The series among `ids` with spans since `sinceMs` (span_durations: one row per series and minute). */
async function seriesWithSpansSince(
  pool: Pool,
  ids: number[],
  sinceMs: number,
): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const { rows } = await pool.query<{ series_id: string }>(
    `SELECT DISTINCT series_id FROM span_durations WHERE series_id = ANY($1::bigint[]) AND minute >= $2`,
    [ids, new Date(sinceMs)],
  );
  return new Set(rows.map((r) => Number(r.series_id)));
}

/** The (service, view, op) among `views` with spans since `sinceMs` in any of their series. */
async function viewsWithSpansSince(
  pool: Pool,
  views: Array<{ service: string; view: string; op: string }>,
  sinceMs: number,
): Promise<Set<string>> {
  if (!views.length) return new Set();
  const { rows } = await pool.query<{ service: string; view: string; op: string }>(
    `SELECT s.service, s.view, s.op
       FROM unnest($1::text[], $2::text[], $3::text[]) AS v(service, view, op)
       JOIN series s ON s.service = v.service AND s.view = v.view AND s.op = v.op
      WHERE EXISTS (SELECT 1 FROM span_durations sd WHERE sd.series_id = s.id AND sd.minute >= $4)
      GROUP BY 1, 2, 3`,
    [
      views.map((v) => v.service),
      views.map((v) => v.view),
      views.map((v) => v.op),
      new Date(sinceMs),
    ],
  );
  return new Set(rows.map(viewKey));
}

/** Whole-view series already out of sight (this process): not asked again. Bounded. */
const hidden = new Set<number>();
const MAX_HIDDEN_REMEMBERED = 10_000;

/**
 * Keep whole-view metric series whose view has spans out of sight (registry COVERED_BY_SPANS),
 * unless they hold calls of their own (counted before the spans came: compaction hides those once
 * spans replace them, compact.ts). One routed probe each (histograms are distributed on Citus).
 */
export async function hideCoveredSeries(pool: Pool, ids: Set<number>): Promise<void> {
  for (const id of [...ids].sort((a, b) => a - b)) {
    if (hidden.has(id)) continue;
    const [minutes, hours] = await Promise.all([
      pool.query('SELECT 1 FROM histograms WHERE series_id = $1 LIMIT 1', [id]),
      pool.query('SELECT 1 FROM histograms_hourly WHERE series_id = $1 LIMIT 1', [id]),
    ]);
    if (minutes.rows.length || hours.rows.length) continue;
    await pool.query('UPDATE series SET folded_into = $2 WHERE id = $1 AND folded_into IS NULL', [
      id,
      COVERED_BY_SPANS,
    ]);
    if (hidden.size >= MAX_HIDDEN_REMEMBERED) hidden.clear();
    hidden.add(id);
  }
}

/**
 * Store latency histogram points. Cumulative streams are turned into deltas
 * against the last point seen (kept in metric_streams, in the sender's
 * buckets), then placed as observations, all in one transaction.
 *
 * Each call is counted once: an SDK that also exports its HTTP metrics (the
 * Java agent does by default) describes the same calls its spans do, in the
 * same series. A series that stored spans in the hour before a point keeps
 * only the spans: the point advances its stream (so a later point diffs
 * against it) but adds no observations (`covered`). A point that names no
 * route (`wholeView`: `http.client.request.duration` by method and server)
 * is covered when any series of its service's view has spans, and then makes no series of its
 * own (Python's `http.client.duration` beside `requests`' spans is not a series named after the
 * metric). Metrics stay
 * the source of what has no spans; their rows say so (`metric_from`), so
 * spans of the same interval that arrive after them replace them
 * (compact.ts, metrics first and spans later).
 */
export async function storeMetricPoints(
  pool: Pool,
  registry: Registry,
  partitions: Partitions,
  points: MetricPoint[],
): Promise<{ stored: number; dropped: number; covered: number }> {
  if (!points.length) return { stored: 0, dropped: 0, covered: 0 };
  const sinceMs = Math.min(...points.map((p) => p.timeMs)) - SPANS_PREFERRED_MS;
  const wholeViews = new Map(
    points.filter((p) => p.wholeView).map((p) => [viewKey(p.series), p.series]),
  );
  const viewsWithSpans = await viewsWithSpansSince(pool, [...wholeViews.values()], sinceMs);
  // A whole-view point of a view with spans counts nothing: it only advances its stream, and its
  // series (the metric's name) is kept out of sight, so the view has no series beside the spans'.
  const viewCovered = (p: MetricPoint) => p.wholeView && viewsWithSpans.has(viewKey(p.series));
  const admitted = await admitObservations(registry, points);
  const { seriesIds, resourceIds, dropped } = admitted;
  points = admitted.kept;
  if (!points.length) return { stored: 0, dropped, covered: 0 };
  const idOf = (p: MetricPoint): number => seriesIds.get(seriesKey(p.series))!;
  await hideCoveredSeries(pool, new Set(points.filter(viewCovered).map(idOf)));
  const seriesWithSpans = await seriesWithSpansSince(pool, [...new Set(points.map(idOf))], sinceMs);
  let covered = 0;
  const links = new Map<string, [number, number]>();
  for (const p of points) {
    const s = idOf(p);
    const r = resourceIds.get(resourceKey(p.resource))!;
    links.set(`${s}:${r}`, [s, r]);
  }
  await registry.link([...links.values()]);
  /** Whole-view series that got calls of their own here (shown again if they were covered). */
  const wholeViewRows = new Set<number>();
  await partitions.ensure('histograms', new Set(points.map((p) => utcDay(p.timeMs))));
  // Oldest first so successive cumulative points of one stream diff against each other.
  const sorted = [...points].sort((a, b) => a.timeMs - b.timeMs);
  const stored = await withTransaction(pool, async (c) => {
    const keys = [...new Set(sorted.map((p) => p.streamKey))].sort();
    type StreamState = {
      startMs: number;
      timeMs: number;
      layout: string | null;
      scale: number;
      idx: number[];
      cnt: number[];
      sumUs: number;
      /** Delta streams: their latest intervals, µs pairs [start, end, …] (migration 0025). */
      intervals: number[] | null;
      /** The series it feeds (NULL on a stream stored before migration 0028 until its next point). */
      seriesId: number | null;
    };
    const state = new Map<string, StreamState>();
    if (keys.length) {
      // A stream without state yet has no row to lock: two exports of its first points in
      // flight at once (a client that timed out and exported again) would each store the
      // whole count. Its key's lock makes the second wait and then difference against the first.
      await c.query(
        `SELECT pg_advisory_xact_lock(${METRIC_STREAM_LOCK_CLASS}, h)
           FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest($1::text[]) AS u(k) ORDER BY 1) s`,
        [keys],
      );
      const { rows } = await c.query(
        `SELECT stream_key, extract(epoch from start_time) * 1000 AS start_ms, extract(epoch from last_time) * 1000 AS time_ms,
                layout, scale, idx, cnt, sum_us, delta_intervals, series_id
           FROM metric_streams WHERE stream_key = ANY($1::text[]) ORDER BY stream_key FOR UPDATE`,
        [keys],
      );
      for (const r of rows)
        state.set(r.stream_key, {
          startMs: Number(r.start_ms),
          timeMs: Number(r.time_ms),
          layout: r.layout,
          scale: r.scale,
          idx: r.idx,
          cnt: r.cnt.map(Number),
          sumUs: Number(r.sum_us),
          intervals: r.delta_intervals?.map(Number) ?? null,
          seriesId: r.series_id === null ? null : Number(r.series_id),
        });
    }
    let stored = 0;
    const values: unknown[][] = [[], [], [], [], [], [], [], [], [], [], []];
    for (const p of sorted) {
      let native: NativeHistogram | null = p.native;
      const sid = idOf(p);
      // The interval the point covers: since the stream's previous point, or its own start.
      let fromMs = p.startMs;
      if (p.cumulative) {
        const prev = state.get(p.streamKey);
        if (prev && p.timeMs <= prev.timeMs) continue; // a re-sent or stale cumulative point adds nothing
        if (prev && Math.abs(prev.startMs - p.startMs) < 1) fromMs = prev.timeMs;
        state.set(p.streamKey, {
          startMs: p.startMs,
          timeMs: p.timeMs,
          layout: p.native.layout,
          scale: p.native.scale,
          idx: p.native.idx,
          cnt: p.native.cnt,
          sumUs: Number.isFinite(p.native.sum) ? p.native.sum * p.toUs : 0,
          intervals: null,
          seriesId: sid,
        });
        if (prev && prev.layout === null) continue; // state written before 0012 (Onset buckets): re-seed only
        if (prev && prev.layout === p.native.layout && Math.abs(prev.startMs - p.startMs) < 1)
          native =
            subtractNative(p.native, {
              idx: prev.idx,
              cnt: prev.cnt,
              sum: prev.sumUs / p.toUs,
              scale: prev.scale,
            }) ?? p.native;
      } else {
        // A delta point covers its own interval: the same interval of its stream again is this
        // point sent again (a client retrying an export it timed out on), not new data.
        const prev = state.get(p.streamKey);
        const seen = prev?.layout === DELTA_LAYOUT ? (prev.intervals ?? []) : [];
        const [from, to] = [toMicros(p.startMs), toMicros(p.timeMs)];
        let again = false;
        for (let i = 0; i + 1 < seen.length && !again; i += 2)
          again = seen[i] === from && seen[i + 1] === to;
        if (again) continue;
        state.set(p.streamKey, {
          startMs: p.startMs,
          timeMs: p.timeMs,
          layout: DELTA_LAYOUT,
          scale: 0,
          idx: [],
          cnt: [],
          sumUs: 0,
          intervals: [...seen, from, to].slice(-2 * DELTA_INTERVALS_KEPT),
          seriesId: sid,
        });
      }
      if (!native.cnt.length) continue;
      const delta = placeNative(native, p.toUs);
      if (delta.count === 0) continue;
      if (viewCovered(p) || seriesWithSpans.has(sid)) {
        covered += delta.count;
        continue;
      }
      if (p.wholeView) wholeViewRows.add(sid);
      const sp = delta.toSparse();
      values[0]!.push(sid);
      values[1]!.push(resourceIds.get(resourceKey(p.resource)));
      values[2]!.push(Math.floor(p.timeMs / 60_000) * 60_000);
      values[3]!.push(delta.count);
      values[4]!.push(delta.sum);
      values[5]!.push(delta.min);
      values[6]!.push(delta.max);
      values[7]!.push(`{${sp.idx.join(',')}}`);
      values[8]!.push(`{${sp.cnt.join(',')}}`);
      values[9]!.push(fromMs);
      values[10]!.push(p.wholeView);
      stored += delta.count;
    }
    if (values[0]!.length) {
      await c.query(
        `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt,
                                 metric_from, metric_whole_view)
         SELECT s, r, to_timestamp(m / 1000.0), n, su, mn, mx, i::int[], k::int[], to_timestamp(f / 1000.0), w
           FROM unnest($1::bigint[], $2::bigint[], $3::float8[], $4::bigint[], $5::float8[], $6::float8[], $7::float8[],
                       $8::text[], $9::text[], $10::float8[], $11::boolean[]) AS u(s, r, m, n, su, mn, mx, i, k, f, w)`,
        values,
      );
    }
    const updated = [...state.entries()].filter(([k]) => keys.includes(k));
    if (updated.length) {
      await c.query(
        `INSERT INTO metric_streams (stream_key, start_time, last_time, idx, cnt, count, sum_us, layout, scale,
                                     delta_intervals, series_id)
         SELECT k, to_timestamp(s / 1000.0), to_timestamp(t / 1000.0), i::int[], c::bigint[], 0, su, l, sc,
                NULLIF(d, '')::bigint[], sid
           FROM unnest($1::text[], $2::float8[], $3::float8[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::int[],
                       $9::text[], $10::bigint[])
                AS u(k, s, t, i, c, su, l, sc, d, sid)
         ON CONFLICT (stream_key) DO UPDATE SET start_time = EXCLUDED.start_time, last_time = EXCLUDED.last_time,
           idx = EXCLUDED.idx, cnt = EXCLUDED.cnt, sum_us = EXCLUDED.sum_us, layout = EXCLUDED.layout, scale = EXCLUDED.scale,
           delta_intervals = EXCLUDED.delta_intervals, series_id = EXCLUDED.series_id`,
        [
          updated.map(([k]) => k),
          updated.map(([, v]) => v.startMs),
          updated.map(([, v]) => v.timeMs),
          updated.map(([, v]) => `{${v.idx.join(',')}}`),
          updated.map(([, v]) => `{${v.cnt.join(',')}}`),
          updated.map(([, v]) => v.sumUs),
          updated.map(([, v]) => v.layout),
          updated.map(([, v]) => v.scale),
          updated.map(([, v]) => (v.intervals ? `{${v.intervals.join(',')}}` : '')),
          updated.map(([, v]) => v.seriesId),
        ],
      );
    }
    return stored;
  });
  // The spans stopped (none for SPANS_PREFERRED_MS): the view's metrics count again, in sight.
  if (wholeViewRows.size) {
    for (const id of wholeViewRows) hidden.delete(id);
    await pool.query(
      `UPDATE series SET folded_into = NULL WHERE id = ANY($1::bigint[]) AND folded_into = $2`,
      [[...wholeViewRows].sort((a, b) => a - b), COVERED_BY_SPANS],
    );
  }
  return { stored, dropped, covered };
}
