/**
 * GET /api/v1/series/{id}/signatures: known mechanisms a series' calls show in a window, change
 * or not (core `standingHints`), from the exemplar spans kept within ONSET_RAW_RETENTION, read
 * as a regression's evidence reads them (an edge's views from paired calls).
 */
import { standingHints } from '@onset/core';
import type { Op, Signatures, View } from '@onset/contract';
import type { Queryable } from '../db/pool.ts';
import { badRequest } from '../http/errors.ts';
import { sample, seriesCalls, type SeriesCallLabels } from './evidence.ts';

/** The widest window read (like the other windowed reads of raw data). */
export const SIGNATURES_MAX_WINDOW_MS = 24 * 3_600_000;
/** Exemplars read from the window: the latest of them when it holds more. */
export const SIGNATURES_LIMIT = 20_000;

export async function seriesSignatures(
  pool: Queryable,
  series: SeriesCallLabels,
  fromMs: number,
  toMs: number,
): Promise<Signatures> {
  if (fromMs >= toMs) throw badRequest('"from" must be before "to"');
  if (toMs - fromMs > SIGNATURES_MAX_WINDOW_MS)
    throw badRequest(
      `the window is too wide: at most ${SIGNATURES_MAX_WINDOW_MS / 3_600_000} h of raw spans are read`,
    );
  const [calls] = await seriesCalls(pool, series, [
    { fromMs, toMs, newestFirst: true, limit: SIGNATURES_LIMIT },
  ]);
  return {
    series_id: series.series_id,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    calls: calls!.length,
    complete: calls!.length < SIGNATURES_LIMIT,
    hints: standingHints({
      op: series.op as Op,
      view: series.view as View,
      samples: calls!.map(sample),
    }),
  };
}
