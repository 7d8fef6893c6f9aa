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
import type { DetectBudget } from '../config.ts';
import type { Pool } from '../db/pool.ts';

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

/** The last pass this process finished, per pool (GET /api/v1/detect `last_on_this_server`). */
const finished = new WeakMap<Pool, object>();

export function recordFinished<R extends object>(
  pool: Pool,
  pass: R & { started_at: string },
): void {
  finished.set(pool, pass);
}

export function lastFinishedOf<R extends object>(pool: Pool): (R & { started_at: string }) | null {
  return (finished.get(pool) as (R & { started_at: string }) | undefined) ?? null;
}

/** Resident memory of an idle server (runtime, Fastify, pools, registries), rounded up from measurements. */
export const BASE_RSS_MB = 256;
/**
 * Per series of a batch: the detectors of up to two batches not yet
 * committed (the cache may exceed its cap by those until their commit), one
 * batch's minute points and the next batch's read.
 */
export const BATCH_SERIES_BYTES = 128 * 1024;

/**
 * Per series, the pass's index of them (ids and checkpoint times, a Map and
 * an array): measured 77 bytes (node --expose-gc, 400,000 series), rounded up.
 */
export const INDEX_SERIES_BYTES = 96;

/**
 * The server's documented resident-memory budget during passes (docs/deploy.md
 * "Memory on large passes"): baseline + detector cache + batches in flight +
 * the pass's index of series (the only part that grows with the series count).
 */
export function memoryBudgetMb(b: DetectBudget, series: number): number {
  return Math.ceil(
    BASE_RSS_MB +
      b.cacheMb +
      (b.batchSize * BATCH_SERIES_BYTES + series * INDEX_SERIES_BYTES) / 2 ** 20,
  );
}
