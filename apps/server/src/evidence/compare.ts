/**
 * GET /api/v1/series/{id}/compare: a selection on a chart (a time range, a latency band, or
 * both: a heatmap box) against the rest of the window's calls, by attribute (core
 * `selectionLifts`), from the exemplar spans kept within ONSET_RAW_RETENTION.
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
    complete: calls!.length < COMPARE_LIMIT,
    raw_from: iso((opts.nowMs ?? Date.now()) - opts.rawRetentionMs),
    attributes: selectionLifts(selected.map(sample), rest.map(sample)),
    exemplars: pickExemplars(selected, opts.traceUrlTemplate),
  };
}
