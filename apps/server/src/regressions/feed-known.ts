/**
 * Feeding the detectors of series that have a state: load the states the
 * cache lacks (or holds older), feed the minutes since each one's
 * `through`, collect the steps, and choose which states to checkpoint.
 */
import type { MinutePoint } from '@onset/core';
import type { PoolClient } from '../db/pool.ts';
import { readPoints } from './points.ts';
import type { StateCache } from './state-cache.ts';
import { MINUTE_MS as MIN, type BatchWork, type PassResult } from './work.ts';

/** Checkpoint a state at least this often (and on a per-series minute phase of CHECKPOINT_EVERY). */
const CHECKPOINT_EVERY = 15;
const CHECKPOINT_MAX_MS = 30 * MIN;

/** Series with a state: load what the cache lacks, feed the minutes since, collect steps. */
export async function feedKnown(
  cache: StateCache,
  c: PoolClient,
  batch: number[],
  dbThrough: Map<number, number>,
  H: number,
  result: PassResult,
  unreadable: number[],
): Promise<BatchWork> {
  // A state this version cannot read (the detector changed): the series starts over.
  unreadable.push(...(await cache.loadStale(c, batch, dbThrough)));
  const work: BatchWork = { events: [], fed: new Map(), checkpoint: [] };
  let from = Infinity;
  const due: number[] = [];
  for (const id of batch) {
    const t = cache.detectors.get(id);
    if (!t) continue;
    if (t.through < H) {
      due.push(id);
      from = Math.min(from, t.through);
    }
  }
  const points = due.length
    ? await readPoints(c, { seriesIds: due, fromMs: from, toMs: H, table: 'minute' })
    : new Map<number, MinutePoint[]>();
  for (const id of due) {
    const t = cache.detectors.get(id)!;
    const ps = (points.get(id) ?? []).filter((p) => p.t >= t.through);
    if (ps.length) {
      for (const change of t.det.pushAll(ps)) work.events.push({ seriesId: id, change });
      work.fed.set(id, ps);
      result.series.fed++;
      result.series.points += ps.length;
    }
    t.through = H;
  }
  const phase = H / MIN;
  const withEvents = new Set(work.events.map((e) => e.seriesId));
  for (const id of batch) {
    if (!cache.detectors.has(id)) continue;
    const last = dbThrough.get(id)!;
    if (last >= H) continue;
    if (
      withEvents.has(id) ||
      H - last >= CHECKPOINT_MAX_MS ||
      (phase + id) % CHECKPOINT_EVERY === 0
    )
      work.checkpoint.push(id);
  }
  return work;
}
