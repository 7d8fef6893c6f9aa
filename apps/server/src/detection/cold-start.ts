/**
 * Series seen for the first time: a detector over the last `coldWindowMs`
 * of minutes, and the older history screened on hourly rollups, where an
 * hourly step is re-examined on the minutes around it (zoom).
 */
import {
  detectOptionsFor,
  MIN_RATIO,
  StepDetector,
  type DetectOptions,
  type MinutePoint,
} from '@onset/core';
import type { PoolClient } from '../db/pool.ts';
import { SCREEN_OPTIONS } from './detect-options.ts';
import { readPointWindows, readPoints } from './points.ts';
import { readLabels, type Labels, type StateCache } from './state-cache.ts';
import { HOUR_MS as HOUR, type BatchWork, type PassResult } from './work.ts';

/** What a batch of new series needs: labels, minutes of the cold window, hours since `hoursFrom`. */
export interface FreshData {
  labels: Map<number, Labels>;
  minutes: Map<number, MinutePoint[]>;
  hours: Map<number, MinutePoint[]>;
}

/** Points of new series: minutes of the cold window, hours since `hoursFrom` (null: no screening). */
export async function fetchFresh(
  reader: PoolClient,
  batch: number[],
  coldFrom: number,
  H: number,
  hoursFrom: number | null,
): Promise<FreshData> {
  const labels = await readLabels(reader, batch);
  const minutes = await readPoints(reader, {
    seriesIds: batch,
    fromMs: coldFrom,
    toMs: H,
    table: 'minute',
  });
  const hours =
    hoursFrom !== null
      ? await readPoints(reader, { seriesIds: batch, fromMs: hoursFrom, toMs: H, table: 'hour' })
      : new Map<number, MinutePoint[]>();
  return { labels, minutes, hours };
}

/** Series seen for the first time: minute detector over the cold window, hourly screen before it. */
export async function computeFresh(
  cache: StateCache,
  zoomer: PoolClient,
  batch: number[],
  data: FreshData,
  H: number,
  coldFrom: number,
  result: PassResult,
): Promise<BatchWork> {
  const work: BatchWork = { events: [], fed: new Map(), checkpoint: [], advance: [] };
  const candidates: Array<{ id: number; opts: DetectOptions; t: number; span: number }> = [];
  for (let k = 0; k < batch.length; k++) {
    // Let the reader's stream (the next batch) flow while the detectors run.
    if (k % 32 === 31) await new Promise((resolve) => setImmediate(resolve));
    const id = batch[k]!;
    const labels = data.labels.get(id);
    if (!labels) continue;
    const opts = detectOptionsFor(labels.view);
    const det = new StepDetector(opts);
    const ps = data.minutes.get(id) ?? [];
    for (const change of det.pushAll(ps)) work.events.push({ seriesId: id, change });
    if (ps.length) {
      work.fed.set(id, ps);
      result.series.fed++;
      result.series.points += ps.length;
    }
    cache.detectors.set(id, { det, through: H });
    work.checkpoint.push(id);

    // Steps older than the minute window: find them on hourly points, then place them on minutes.
    const hp = data.hours.get(id);
    if (!hp || hp.length < 12 || !levelsMove(hp, opts.floor ?? 0)) continue;
    for (const cand of new StepDetector({ ...opts, ...SCREEN_OPTIONS }).pushAll(hp)) {
      if (cand.direction !== 'regression' || cand.t >= coldFrom + HOUR) continue;
      result.screened++;
      const span = (cand.onsetUncertaintyPoints + 3) * HOUR;
      candidates.push({ id, opts, t: cand.t, span });
    }
  }
  if (candidates.length) {
    // One read for every candidate of the batch, on its own connection (the reader is busy with the next batch).
    const windows = new Map<number, { seriesId: number; fromMs: number; toMs: number }>();
    for (const k of candidates) {
      const from = k.t - k.span - 2 * HOUR;
      const to = Math.min(H, k.t + k.span);
      const w = windows.get(k.id);
      if (w) {
        w.fromMs = Math.min(w.fromMs, from);
        w.toMs = Math.max(w.toMs, to);
      } else windows.set(k.id, { seriesId: k.id, fromMs: from, toMs: to });
    }
    const zoom = await readPointWindows(zoomer, [...windows.values()]);
    for (const k of candidates) {
      const w = windows.get(k.id)!;
      const ps = (zoom.get(k.id) ?? []).filter(
        (p) => p.t >= k.t - k.span - 2 * HOUR && p.t < w.toMs && p.t < k.t + k.span,
      );
      for (const change of new StepDetector(k.opts).pushAll(ps)) {
        if (Math.abs(change.t - k.t) <= k.span) work.events.push({ seriesId: k.id, change });
      }
    }
  }
  return work;
}

/**
 * Can these hourly points hold a step the screen would report? The screen
 * needs about five hours after a step, so a step of at least MIN_RATIO shows
 * as that much difference between the medians of two 4-hour blocks. When the
 * block medians of p50 and p99 all sit within a tenth of each other all week
 * (a steady series, the common case), there is nothing to screen.
 */
function levelsMove(hp: readonly MinutePoint[], floor: number): boolean {
  const limit = Math.log(1 + (MIN_RATIO - 1) / 2);
  for (const key of ['p50', 'p99'] as const) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i + 4 <= hp.length; i += 4) {
      const block = [hp[i]![key], hp[i + 1]![key], hp[i + 2]![key], hp[i + 3]![key]].sort(
        (a, b) => a - b,
      );
      const m = Math.log((block[1]! + block[2]!) / 2 + floor);
      if (m < lo) lo = m;
      if (m > hi) hi = m;
    }
    if (hi - lo >= limit) return true;
  }
  return false;
}
