/**
 * The detection pass (api.md "Regressions"): per-minute points of every
 * series go through the core's online step detector; a confirmed step
 * becomes one regression, attributed to deploy markers and split by host
 * cohorts, updated as data arrives and resolved when latency is back.
 *
 * Incremental. Each series has a detector state in regress_state that
 * reflects every minute before its `through`; a pass feeds the minutes from
 * there up to the sealed horizon (a minute ago) and nothing else. States are
 * kept in memory between passes and checkpointed to the database every
 * ~15 minutes per series (spread over passes), right away when something
 * happened. A pass that starts from an older checkpoint (another server ran
 * the passes in between, or this one crashed) replays those minutes: the
 * detector is deterministic and regressions are matched by series and onset,
 * so a replay finds the same steps and adds nothing twice. That is also why
 * a crash mid-pass loses nothing: whatever was not committed is recomputed.
 *
 * Cold start. A series seen for the first time gets a detector over its last
 * `coldWindowMs` of minutes (6 h), and older history (up to `lookbackMs`,
 * 7 d) is screened on the hourly rollups: an hourly step is re-examined on
 * minute data around it. So a first pass over a week of 10,000 series reads
 * 3.6 M minute and 1.7 M hourly rows instead of 100 M minute rows. (The
 * hourly screen needs ~5 hours after a step to see it, which is why the
 * minute window is 6 h: a step just before it may still be missed.)
 *
 * One pass at a time across all servers: a session advisory lock (lock.ts).
 * The pass's parts live in their own modules: the in-memory detectors
 * (state-cache.ts), their stored states (state.ts), the regressions table
 * (store.ts), attribution (attribute.ts, scoring in core) and alerting
 * (alerting.ts). This file is the pass itself: what to feed, in which
 * order, and what a step does to the regressions table.
 */
import {
  StepDetector,
  stepRecovery,
  type DetectOptions,
  type MinutePoint,
  type StepChange,
} from '@onset/core';
import type { Pool, PoolClient } from '../db/pool.ts';
import {
  detectionPassSeconds,
  detectionSeriesScanned,
  regressionsDetected,
} from '../observability/metrics.ts';
import { raiseRegressionAlert, resolveRegressionAlert } from './alerting.ts';
import { attribute } from './attribute.ts';
import { detectOptionsFor, MIN_RATIO, SCREEN_OPTIONS } from './detect-options.ts';
import { fmtMs, level, median, ratio, round, roundMs } from './levels.ts';
import { withPassLock } from './lock.ts';
import { countEvents, readPointWindows, readPoints } from './points.ts';
import { StateCache, type Labels } from './state-cache.ts';
import { readThroughs, recordPass, seriesWithoutState, writeStates } from './state.ts';
import {
  dueForReattribution,
  insertRegression,
  knownOnsets,
  regressionById,
  regressionJson,
  unresolvedOf,
  updateAfter,
  type Level,
} from './store.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** Checkpoint a state at least this often (and on a per-series minute phase of CHECKPOINT_EVERY). */
const CHECKPOINT_EVERY = 15;
const CHECKPOINT_MAX_MS = 30 * MIN;
/** Points that decide whether latency is back (stepRecovery). */
const RECOVERY_POINTS = 30;
/** Points after the onset that "after" levels are medians over. */
const AFTER_POINTS = 120;
/** Re-rank suspects and cohorts of regressions this young on every pass (late markers, more data). */
const REATTRIBUTE_FOR_MS = 2 * HOUR;

export interface PassOptions {
  /** Feed minutes before this instant (floored to a minute). Default: now - lagMs. */
  uptoMs?: number;
  /** How long a minute is left open for late spans. Default 60 s. */
  lagMs?: number;
  /** Minutes of history a new series' detector starts from. Default 6 h. */
  coldWindowMs?: number;
  /** How far back a new series' history is screened (hourly). Default 7 d. */
  lookbackMs?: number;
  /** Series per read and per transaction. */
  batchSize?: number;
  /** Wall clock (tests). */
  now?: number;
}

export interface PassResult {
  skipped?: boolean;
  through: string;
  duration_ms: number;
  series: { total: number; new: number; fed: number; points: number };
  screened: number;
  regressions: { opened: number; resolved: number; updated: number };
}

interface Event {
  seriesId: number;
  change: StepChange;
}

interface BatchWork {
  events: Event[];
  /** Points fed in this pass, per series. */
  fed: Map<number, MinutePoint[]>;
  /** Series whose state is written (with `through` = the horizon). */
  checkpoint: number[];
}

const floorMinute = (ms: number) => Math.floor(ms / MIN) * MIN;

class Engine {
  readonly cache = new StateCache();

  async pass(pool: Pool, c: PoolClient, opts: PassOptions): Promise<PassResult> {
    const started = performance.now();
    const now = opts.now ?? Date.now();
    const H = floorMinute(opts.uptoMs ?? now - (opts.lagMs ?? MIN));
    const coldWindow = opts.coldWindowMs ?? 6 * HOUR;
    const lookback = Math.max(coldWindow, opts.lookbackMs ?? 7 * 24 * HOUR);
    const batchSize = opts.batchSize ?? 1000;
    const result: PassResult = {
      through: new Date(H).toISOString(),
      duration_ms: 0,
      series: { total: 0, new: 0, fed: 0, points: 0 },
      screened: 0,
      regressions: { opened: 0, resolved: 0, updated: 0 },
    };

    const dbThrough = await readThroughs(c);
    this.cache.keepStored(dbThrough);
    const freshRows = await seriesWithoutState<Labels>(c);
    this.cache.setLabels(freshRows);

    // A state too far behind (the engine was off for a long time) starts over like a new series.
    const known: number[] = [];
    const restart: number[] = [];
    for (const [id, through] of dbThrough) {
      const at = Math.max(through, this.cache.detectors.get(id)?.through ?? -Infinity);
      (at < H - coldWindow ? restart : known).push(id);
    }
    const fresh = [...freshRows.map((r) => Number(r.id)), ...restart];
    if (restart.length) await this.cache.loadLabels(c, restart);
    result.series.total = known.length + fresh.length;
    result.series.new = fresh.length;

    // Reads go through a second connection so that PostgreSQL prepares the
    // next batch while this process runs the detectors, and the previous
    // batch commits meanwhile on the pass's own connection.
    const reader = await pool.connect();
    let zoomer: PoolClient | null = null;
    const inflight = new Set<Promise<unknown>>();
    const track = <T>(p: Promise<T>): Promise<T> => {
      const settled: Promise<unknown> = p.then(
        (): boolean => inflight.delete(settled),
        (): boolean => inflight.delete(settled),
      );
      inflight.add(settled);
      return p;
    };
    let pending: Promise<void> | null = null;
    const commitLater = async (work: BatchWork) => {
      if (pending) await pending;
      pending = track(this.commit(c, work, H, now, dbThrough, result));
      pending.catch(() => {});
    };
    try {
      const unreadable: number[] = [];
      for (let i = 0; i < known.length; i += batchSize) {
        const work = await this.feedKnown(
          reader,
          known.slice(i, i + batchSize),
          dbThrough,
          H,
          result,
          unreadable,
        );
        await commitLater(work);
      }
      if (unreadable.length) {
        await this.cache.loadLabels(reader, unreadable);
        fresh.push(...unreadable);
        result.series.new += unreadable.length;
      }
      const coldFrom = H - coldWindow;
      const fetch = (batch: number[]) => {
        const p = track(
          this.fetchFresh(
            reader,
            batch,
            coldFrom,
            H,
            lookback > coldWindow ? floorMinute(H - lookback) : null,
          ),
        );
        p.catch(() => {});
        return p;
      };
      let next = fresh.length ? fetch(fresh.slice(0, batchSize)) : null;
      for (let i = 0; i < fresh.length; i += batchSize) {
        const batch = fresh.slice(i, i + batchSize);
        const data = await next!;
        next =
          i + batchSize < fresh.length
            ? fetch(fresh.slice(i + batchSize, i + 2 * batchSize))
            : null;
        zoomer ??= await pool.connect();
        const work = await this.computeFresh(zoomer, batch, data, H, coldFrom, result);
        await commitLater(work);
      }
      if (pending) await pending;
    } finally {
      // Never hand a connection back with a COPY or a transaction still running on it.
      await Promise.all([...inflight]);
      reader.release();
      zoomer?.release();
    }
    await this.reattribute(c, H, now, result);

    result.duration_ms = Math.round(performance.now() - started);
    await recordPass(c, H, now, result.duration_ms, result);
    detectionSeriesScanned.inc(result.series.total);
    return result;
  }

  /** Series with a state: load what the cache lacks, feed the minutes since, collect steps. */
  private async feedKnown(
    c: PoolClient,
    batch: number[],
    dbThrough: Map<number, number>,
    H: number,
    result: PassResult,
    unreadable: number[],
  ): Promise<BatchWork> {
    // A state this version cannot read (the detector changed): the series starts over.
    unreadable.push(...(await this.cache.loadStale(c, batch, dbThrough)));
    const work: BatchWork = { events: [], fed: new Map(), checkpoint: [] };
    let from = Infinity;
    const due: number[] = [];
    for (const id of batch) {
      const t = this.cache.detectors.get(id);
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
      const t = this.cache.detectors.get(id)!;
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
      if (!this.cache.detectors.has(id)) continue;
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

  /** Points of new series: minutes of the cold window, hours since `hoursFrom` (null: no screening). */
  private async fetchFresh(
    reader: PoolClient,
    batch: number[],
    coldFrom: number,
    H: number,
    hoursFrom: number | null,
  ): Promise<{ minutes: Map<number, MinutePoint[]>; hours: Map<number, MinutePoint[]> }> {
    await this.cache.loadLabels(reader, batch);
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
    return { minutes, hours };
  }

  /** Series seen for the first time: minute detector over the cold window, hourly screen before it. */
  private async computeFresh(
    zoomer: PoolClient,
    batch: number[],
    data: { minutes: Map<number, MinutePoint[]>; hours: Map<number, MinutePoint[]> },
    H: number,
    coldFrom: number,
    result: PassResult,
  ): Promise<BatchWork> {
    const work: BatchWork = { events: [], fed: new Map(), checkpoint: [] };
    const candidates: Array<{ id: number; opts: DetectOptions; t: number; span: number }> = [];
    for (let k = 0; k < batch.length; k++) {
      // Let the reader's stream (the next batch) flow while the detectors run.
      if (k % 32 === 31) await new Promise((resolve) => setImmediate(resolve));
      const id = batch[k]!;
      const labels = this.cache.labels.get(id);
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
      this.cache.detectors.set(id, { det, through: H });
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

  /** Write one batch: new regressions, updated open ones, checkpoints — one transaction. */
  private async commit(
    c: PoolClient,
    work: BatchWork,
    H: number,
    now: number,
    dbThrough: Map<number, number>,
    result: PassResult,
  ): Promise<void> {
    await c.query('BEGIN');
    try {
      const touched = new Set<number>([...work.fed.keys()]);
      // New regressions get their alert after the update below, which may find them already over.
      const pendingAlerts = new Set<string>();
      const opened = await this.openRegressions(c, work.events, H, now, result, pendingAlerts);
      for (const id of opened) touched.add(id);
      if (touched.size)
        await this.updateOpen(c, [...touched], work.fed, H, now, result, pendingAlerts);
      await writeStates(
        c,
        H,
        work.checkpoint.map((id) => [id, this.cache.detectors.get(id)!.det.encode()] as const),
      );
      await c.query('COMMIT');
      for (const id of work.checkpoint) dbThrough.set(id, H);
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }

  /** One regression per step: new steps are inserted, steps already known (any status) are left alone. */
  private async openRegressions(
    c: PoolClient,
    events: Event[],
    H: number,
    now: number,
    result: PassResult,
    pendingAlerts: Set<string>,
  ): Promise<number[]> {
    const ups = events.filter((e) => e.change.direction === 'regression');
    if (!ups.length) return [];
    const ids = [...new Set(ups.map((e) => e.seriesId))];
    const existing = await knownOnsets(c, ids);
    await this.cache.loadLabels(c, ids);
    const seriesOpened: number[] = [];
    for (const e of ups) {
      const ch = e.change;
      const unc = ch.onsetUncertaintyPoints * MIN;
      const dup = existing.find(
        (r) =>
          Number(r.series_id) === e.seriesId &&
          Math.abs(r.onset.getTime() - ch.t) <= Math.max(10 * MIN, 3 * Math.max(unc, r.unc)),
      );
      if (dup) continue;
      const labels = this.cache.labels.get(e.seriesId)!;
      const floor = detectOptionsFor(labels.view).floor ?? 0;
      const before = level(ch.before);
      const after = level(ch.after);
      after.count = await countEvents(c, e.seriesId, ch.t, H);
      const row = await insertRegression(c, {
        seriesId: e.seriesId,
        labels,
        change: ch,
        uncertaintyMs: unc,
        detectedMs: now,
        confidence: round(ch.confidence, 6),
        before,
        after,
        ratioP50: ratio(before.p50_ms, after.p50_ms, floor / 1000),
        ratioP99: ratio(before.p99_ms, after.p99_ms, floor / 1000),
        afterThroughMs: H,
      });
      existing.push({ series_id: e.seriesId, onset: row.onset, unc });
      await attribute(c, row, H, now, { alert: false });
      seriesOpened.push(e.seriesId);
      result.regressions.opened++;
      regressionsDetected.inc({ op: labels.op, view: labels.view });
      pendingAlerts.add(row.id);
    }
    return seriesOpened;
  }

  /**
   * Open and acknowledged regressions of the series fed in this pass: levels
   * since the onset from the detector's recent points, events counted once
   * (after_through), and resolution when latency is back at the before level.
   */
  private async updateOpen(
    c: PoolClient,
    ids: number[],
    fed: Map<number, MinutePoint[]>,
    H: number,
    now: number,
    result: PassResult,
    pendingAlerts: Set<string>,
  ): Promise<void> {
    for (const r of await unresolvedOf(c, ids)) {
      const sid = Number(r.series_id);
      const tracked = this.cache.detectors.get(sid);
      if (!tracked) continue;
      const floor = tracked.det.opts.floor;
      const since = r.onset.getTime() + r.onset_uncertainty_ms;
      const pts = tracked.det.recentPoints().filter((p) => p.t >= since);
      const newCount = (fed.get(sid) ?? []).reduce(
        (n, p) => (p.t >= r.after_through.getTime() ? n + p.count : n),
        0,
      );
      const after: Level = { ...r.after, count: r.after.count + newCount };
      if (pts.length) {
        const last = pts.slice(-AFTER_POINTS);
        after.p50_ms = roundMs(median(last.map((p) => p.p50)) / 1000);
        after.p99_ms = roundMs(median(last.map((p) => p.p99)) / 1000);
      }
      const recovery = stepRecovery(r.change, pts.slice(-RECOVERY_POINTS), { floor });
      const resolved = recovery.resolved;
      await updateAfter(c, r.id, {
        after,
        ratioP50: ratio(r.before.p50_ms, after.p50_ms, floor / 1000),
        ratioP99: ratio(r.before.p99_ms, after.p99_ms, floor / 1000),
        afterThroughMs: H,
        nowMs: now,
        resolvedAtMs: resolved ? pts[pts.length - 1]!.t + MIN : null,
        resolution: resolved
          ? `latency returned to the before level (${r.metric} ${fmtMs(recovery.level / 1000)} ms)`
          : null,
      });
      const wasPending = pendingAlerts.delete(r.id);
      if (resolved) {
        result.regressions.resolved++;
        if (!wasPending)
          await resolveRegressionAlert(c, r.id, {
            now,
            reason: 'latency returned to the before level',
          });
      } else {
        if (!wasPending) result.regressions.updated++;
        if (wasPending) {
          const fresh = await regressionById(c, r.id);
          await raiseRegressionAlert(c, regressionJson(fresh!), { now });
        }
      }
    }
    // Opened on a series without new points in this pass (a zoomed old step): alert as is.
    for (const id of [...pendingAlerts]) {
      pendingAlerts.delete(id);
      const fresh = await regressionById(c, id, { unresolved: true });
      if (fresh) await raiseRegressionAlert(c, regressionJson(fresh), { now });
    }
  }

  /** Young regressions: markers posted late and more data after the onset can change suspects and cohort. */
  private async reattribute(
    c: PoolClient,
    H: number,
    now: number,
    _result: PassResult,
  ): Promise<void> {
    for (const r of await dueForReattribution(c, now - REATTRIBUTE_FOR_MS, now - 30_000)) {
      await c.query('BEGIN');
      try {
        await attribute(c, r, H, now, { alert: true });
        await c.query('COMMIT');
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      }
    }
  }
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

const engines = new WeakMap<Pool, Engine>();
function engineFor(pool: Pool): Engine {
  let e = engines.get(pool);
  if (!e) engines.set(pool, (e = new Engine()));
  return e;
}

/**
 * Run one detection pass. With `wait: false` (the scheduler), return
 * `{skipped: true}` at once when another pass holds the lock; otherwise wait
 * for it (POST /api/v1/detect must answer with all data examined).
 */
export async function runDetectionPass(
  pool: Pool,
  opts: PassOptions & { wait?: boolean } = {},
): Promise<PassResult> {
  const engine = engineFor(pool);
  const end = detectionPassSeconds.startTimer();
  const result = await withPassLock(pool, opts.wait !== false, async (client) => {
    try {
      const r = await engine.pass(pool, client, opts);
      end({ result: 'ok' });
      return r;
    } catch (err) {
      // In-memory detectors may be ahead of what was committed: start again from the checkpoints.
      engine.cache.reset();
      end({ result: 'error' });
      throw err;
    }
  });
  if (result) return result;
  end({ result: 'ok' });
  const H = floorMinute(opts.uptoMs ?? (opts.now ?? Date.now()) - (opts.lagMs ?? MIN));
  return {
    skipped: true,
    through: new Date(H).toISOString(),
    duration_ms: 0,
    series: { total: 0, new: 0, fed: 0, points: 0 },
    screened: 0,
    regressions: { opened: 0, resolved: 0, updated: 0 },
  };
}
