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

/**
 * Series with a state: read the minutes since each one's `through`, load the
 * detectors of those that have new minutes (a series with none keeps its
 * state as it is: only its `through` moves, without reading the state), feed
 * them, collect steps. With `checkpointAll` (the detector cache is over its
 * budget, budget.ts) every fed detector is checkpointed, so that it can be
 * dropped as soon as the batch is committed.
 */
/**
 * The minutes a batch of known series needs (since each one's `through`).
 * It depends only on the batch's own series, so the pass reads the next
 * batch's while it feeds this one.
 */
export async function readKnown(
  cache: StateCache,
  c: PoolClient,
  batch: number[],
  dbThrough: Map<number, number>,
  H: number,
): Promise<Map<number, MinutePoint[]>> {
  let from = Infinity;
  const due: number[] = [];
  for (const id of batch) {
    const t = Math.max(cache.detectors.get(id)?.through ?? -Infinity, dbThrough.get(id)!);
    if (t < H) {
      due.push(id);
      from = Math.min(from, t);
    }
  }
  return due.length
    ? readPoints(c, { seriesIds: due, fromMs: from, toMs: H, table: 'minute' })
    : new Map<number, MinutePoint[]>();
}

export async function feedKnown(
  cache: StateCache,
  c: PoolClient,
  batch: number[],
  dbThrough: Map<number, number>,
  H: number,
  result: PassResult,
  unreadable: number[],
  checkpointAll = false,
  /** readKnown's answer for this batch, when the pass read it ahead. */
  read?: Promise<Map<number, MinutePoint[]>>,
): Promise<BatchWork> {
  const work: BatchWork = { events: [], fed: new Map(), checkpoint: [], advance: [] };
  const throughOf = (id: number) =>
    Math.max(cache.detectors.get(id)?.through ?? -Infinity, dbThrough.get(id)!);
  const due = batch.filter((id) => throughOf(id) < H);
  const points = await (read ?? readKnown(cache, c, batch, dbThrough, H));
  const newPoints = new Map<number, MinutePoint[]>();
  for (const id of due) {
    const since = throughOf(id);
    const ps = (points.get(id) ?? []).filter((p) => p.t >= since);
    if (ps.length) newPoints.set(id, ps);
  }
  // A state this version cannot read (the detector changed): the series starts over.
  unreadable.push(...(await cache.loadStale(c, [...newPoints.keys()], dbThrough)));
  for (const id of due) {
    const t = cache.detectors.get(id);
    const ps = newPoints.get(id);
    if (ps) {
      if (!t) continue; // unreadable
      for (const change of t.det.pushAll(ps)) work.events.push({ seriesId: id, change });
      work.fed.set(id, ps);
      result.series.fed++;
      result.series.points += ps.length;
      t.through = H;
      continue;
    }
    // No new minutes. A detector ahead of its checkpoint keeps the checkpoint rules below;
    // otherwise the stored state is the detector's and only its `through` moves.
    const stored = dbThrough.get(id)!;
    if (t && t.through > stored) {
      t.through = H;
      continue;
    }
    if (t && t.through < stored) cache.detectors.delete(id);
    else if (t) t.through = H;
    work.advance.push(id);
  }
  const phase = H / MIN;
  const withEvents = new Set(work.events.map((e) => e.seriesId));
  const advanced = new Set(work.advance);
  for (const id of batch) {
    if (!cache.detectors.has(id) || advanced.has(id)) continue;
    const last = dbThrough.get(id)!;
    if (last >= H) continue;
    if (
      withEvents.has(id) ||
      (checkpointAll && work.fed.has(id)) ||
      H - last >= CHECKPOINT_MAX_MS ||
      (phase + id) % CHECKPOINT_EVERY === 0
    )
      work.checkpoint.push(id);
  }
  return work;
}
