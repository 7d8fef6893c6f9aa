/**
 * GET /api/v1/series/{id}/compare: a selection on a chart (a time range, a latency band, or
 * both: a heatmap box) against the rest of the window's calls, by attribute (core
 * `selectionLifts`), from the exemplar spans kept within ONSET_RAW_RETENTION, with every stored
 * call counted on each side from the series' span durations (exemplars are a sample of them).
 */
import { selectionLifts } from '@onset/core';
import type { SelectionCompare } from '@onset/contract';
import type { Queryable } from '../db/pool.ts';
import type { CallRow } from './query.ts';
import { badRequest } from '../http/errors.ts';
import { pickExemplars, sample, seriesCalls, type SeriesCallLabels } from './evidence.ts';

/** The widest window compared (like the other windowed reads of raw data). */
export const COMPARE_MAX_WINDOW_MS = 24 * 3_600_000;
/** Exemplars read from the window: the latest of them when it holds more. */
export const COMPARE_LIMIT = 20_000;

export interface CompareRequest {
  fromMs: number;
  toMs: number;
  selFromMs: number;
  selToMs: number;
  minMs: number | null;
  maxMs: number | null;
}

/** 400 for a window or selection that cannot be compared, in words. */
export function checkCompare(q: CompareRequest): void {
  if (q.fromMs >= q.toMs) throw badRequest('"from" must be before "to"');
  if (q.toMs - q.fromMs > COMPARE_MAX_WINDOW_MS)
    throw badRequest(
      `the window is too wide: at most ${COMPARE_MAX_WINDOW_MS / 3_600_000} h of raw spans are compared`,
    );
  if (q.selFromMs >= q.selToMs) throw badRequest('"sel_from" must be before "sel_to"');
  if (q.selFromMs < q.fromMs || q.selToMs > q.toMs)
    throw badRequest('the selection (sel_from, sel_to) must lie inside the window (from, to)');
  if (q.minMs !== null && q.maxMs !== null && q.minMs >= q.maxMs)
    throw badRequest('"min_ms" must be below "max_ms"');
  const narrows =
    q.selFromMs > q.fromMs || q.selToMs < q.toMs || q.minMs !== null || q.maxMs !== null;
  if (!narrows)
    throw badRequest(
      'the selection is the whole window: give sel_from/sel_to (a time range) or min_ms/max_ms (a latency band)',
    );
}

/**
 * Every stored call on each side of the selection, from `span_durations` (arrays of every
 * span's duration per series and start minute, kept within raw retention): the time range by
 * the calls' start minute, the band by each duration (a time range alone counts arrays, no
 * element is read). Null for an edge's views, whose calls are
 * read paired (seriesCalls) and whose durations are not the series' own.
 */
async function allCalls(
  pool: Queryable,
  series: SeriesCallLabels,
  q: CompareRequest,
): Promise<SelectionCompare['all_calls']> {
  if (series.peer && ['client', 'server', 'gap'].includes(series.view)) return null;
  const { rows } = await pool.query<{ selected: string; total: string }>(
    `SELECT coalesce(sum(CASE WHEN sd.minute >= $4 AND sd.minute < $5
                              THEN CASE WHEN $6::float8 IS NULL AND $7::float8 IS NULL
                                        THEN cardinality(sd.durations)
                                        ELSE (SELECT count(*) FROM unnest(sd.durations) AS d(us)
                                               WHERE ($6::float8 IS NULL OR d.us >= $6)
                                                 AND ($7::float8 IS NULL OR d.us < $7)) END
                              ELSE 0 END), 0)::int8::text AS selected,
            coalesce(sum(cardinality(sd.durations)), 0)::int8::text AS total
       FROM span_durations sd
      WHERE sd.series_id = $1 AND sd.minute >= $2 AND sd.minute < $3`,
    [
      series.series_id,
      new Date(floorMinute(q.fromMs)),
      new Date(q.toMs),
      new Date(floorMinute(q.selFromMs)),
      new Date(q.selToMs),
      q.minMs === null ? null : q.minMs * 1000,
      q.maxMs === null ? null : q.maxMs * 1000,
    ],
  );
  const selected = Number(rows[0]!.selected);
  return {
    selected,
    rest: Number(rows[0]!.total) - selected,
    from: new Date(floorMinute(q.selFromMs)).toISOString(),
    to: new Date(ceilMinute(q.selToMs)).toISOString(),
  };
}

const floorMinute = (ms: number) => Math.floor(ms / 60_000) * 60_000;
const ceilMinute = (ms: number) => Math.ceil(ms / 60_000) * 60_000;

export async function compareSelection(
  pool: Queryable,
  series: SeriesCallLabels,
  q: CompareRequest,
  opts: { rawRetentionMs: number; traceUrlTemplate?: string; nowMs?: number },
): Promise<SelectionCompare> {
  const [calls] = await seriesCalls(pool, series, [
    { fromMs: q.fromMs, toMs: q.toMs, newestFirst: true, limit: COMPARE_LIMIT },
  ]);
  const inSelection = (startMs: number, ms: number) =>
    startMs >= q.selFromMs &&
    startMs < q.selToMs &&
    (q.minMs === null || ms >= q.minMs) &&
    (q.maxMs === null || ms < q.maxMs);
  const selected: CallRow[] = [];
  const rest: CallRow[] = [];
  for (const c of calls!)
    (inSelection(c.start.getTime(), c.measure_us / 1000) ? selected : rest).push(c);
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    series_id: series.series_id,
    from: iso(q.fromMs),
    to: iso(q.toMs),
    selection: { from: iso(q.selFromMs), to: iso(q.selToMs), min_ms: q.minMs, max_ms: q.maxMs },
    calls: { selected: selected.length, rest: rest.length },
    all_calls: await allCalls(pool, series, q),
    complete: calls!.length < COMPARE_LIMIT,
    raw_from: iso((opts.nowMs ?? Date.now()) - opts.rawRetentionMs),
    attributes: selectionLifts(selected.map(sample), rest.map(sample)),
    exemplars: pickExemplars(selected, opts.traceUrlTemplate),
  };
}
