/**
 * The detection pass's memory, bounded whatever the number of series:
 *
 * - reads, feeds and commits go `batchSize` series at a time (default 1000,
 *   ONSET_DETECT_BATCH), so a batch's minute points are the only per-pass data;
 * - the detectors kept in memory between passes (StateCache) are capped by
 *   ONSET_DETECT_CACHE_MB (default 256 MiB, counted at DETECTOR_BYTES each):
 *   past it, detectors whose state is checkpointed are dropped first (nothing
 *   is lost: the next pass reloads them from regress_state), then at the end of
 *   the pass the others (the next pass replays their minutes from the
 *   checkpoint; the detector is deterministic, so it finds the same steps).
 *
 * And its progress (series done / total) for the log and GET /api/v1/detect.
 */
import type { Pool } from '../db/pool.ts';

/**
 * Heap per cached detector: measured 6.5 KiB with 400 minutes fed (node
 * --expose-gc, 3,000 detectors); rounded up for the long-history rings.
 */
export const DETECTOR_BYTES = 8 * 1024;

export interface DetectBudget {
  batchSize: number;
  cacheMaxSeries: number;
  cacheMb: number;
}

function positive(raw: string | undefined, dflt: number, name: string, integer: boolean): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got "${raw}"`);
  return n;
}

export function detectBudget(env: NodeJS.ProcessEnv = process.env): DetectBudget {
  const cacheMb = positive(env.ONSET_DETECT_CACHE_MB, 256, 'ONSET_DETECT_CACHE_MB', false);
  return {
    batchSize: positive(env.ONSET_DETECT_BATCH, 1000, 'ONSET_DETECT_BATCH', true),
    cacheMb,
    cacheMaxSeries: Math.max(1, Math.floor((cacheMb * 1024 * 1024) / DETECTOR_BYTES)),
  };
}

export interface PassProgress {
  started_at: string;
  series_done: number;
  series_total: number;
}

/** The pass running in this process, per pool (one pass at a time per cluster: lock.ts). */
const running = new WeakMap<Pool, PassProgress>();

export function progressOf(pool: Pool): PassProgress | null {
  const p = running.get(pool);
  return p ? { ...p } : null;
}

export function beginProgress(pool: Pool, total: number): PassProgress {
  const p = { started_at: new Date().toISOString(), series_done: 0, series_total: total };
  running.set(pool, p);
  return p;
}

export function endProgress(pool: Pool): void {
  running.delete(pool);
}
