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
 * One pass at a time across all servers: a session advisory lock.
 */
import {
  StepDetector,
  findCohort,
  markerWindow,
  rankSuspects,
  stepRecovery,
  type CohortRow,
  type DetectOptions,
  type Marker,
  type MinutePoint,
  type StepChange,
} from '@onset/core';
import type { Pool, PoolClient } from '../db/pool.ts';
import {
  raiseRegressionAlert,
  refreshRegressionAlertIfFiring,
  resolveRegressionAlert,
} from './alerting.ts';
import {
  detectionPassSeconds,
  detectionSeriesScanned,
  regressionsDetected,
} from '../observability/metrics.ts';
import { readPointWindows, readPoints } from './points.ts';
import { readStates } from './state.ts';
import { REGRESSION_COLUMNS, regressionJson, type Level, type RegressionRow } from './store.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** Any two server processes use the same key: one pass at a time. */
const LOCK_KEY = 0x0de7ec7;

/** Smallest step (after / before) reported as a regression. */
export const MIN_RATIO = 1.2;
/** Gap views (client minus server) sit near zero: compare them above a 1 ms floor (µs). */
const GAP_FLOOR_US = 1000;
/**
 * Hourly screening of old history: shorter windows than the minute detector,
 * and a looser test (a step three hours before the minute window must still
 * pass): a candidate only costs a read of minutes, which decide.
 */
const SCREEN_OPTIONS: DetectOptions = {
  beforePoints: 48,
  maxAfterPoints: 12,
  warmupPoints: 6,
  alpha: 1e-3,
};
/** Checkpoint a state at least this often (and on a per-series minute phase of CHECKPOINT_EVERY). */
const CHECKPOINT_EVERY = 15;
const CHECKPOINT_MAX_MS = 30 * MIN;
/** Points that decide whether latency is back (stepRecovery). */
const RECOVERY_POINTS = 30;
/** Points after the onset that "after" levels are medians over. */
const AFTER_POINTS = 120;
/** Cohort windows around the onset. */
const COHORT_WINDOW_MS = 2 * HOUR;
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

interface Labels {
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string;
}

interface Tracked {
  det: StepDetector;
  /** The detector has seen every minute before this one. */
  through: number;
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

export function detectOptionsFor(view: string): DetectOptions {
  return { floor: view === 'gap' ? GAP_FLOOR_US : 0, minRatio: MIN_RATIO };
}

class Engine {
  readonly cache = new Map<number, Tracked>();
  readonly labels = new Map<number, Labels>();

  reset(): void {
    this.cache.clear();
  }

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

    const { rows: stateRows } = await c.query<{ id: number; through: number }>(
      `SELECT series_id AS id, (extract(epoch FROM through) * 1000)::float8 AS through FROM regress_state`,
    );
    const dbThrough = new Map(stateRows.map((r) => [Number(r.id), Number(r.through)]));
    for (const id of this.cache.keys()) if (!dbThrough.has(id)) this.cache.delete(id);
    const { rows: freshRows } = await c.query<Labels & { id: number }>(
      `SELECT s.id, s.service, s.op, s.view, s.name, s.peer FROM series s
        WHERE NOT EXISTS (SELECT 1 FROM regress_state r WHERE r.series_id = s.id) ORDER BY s.id`,
    );
    for (const r of freshRows)
      this.labels.set(Number(r.id), {
        service: r.service,
        op: r.op,
        view: r.view,
        name: r.name,
        peer: r.peer,
      });

    // A state too far behind (the engine was off for a long time) starts over like a new series.
    const known: number[] = [];
    const restart: number[] = [];
    for (const [id, through] of dbThrough) {
      const at = Math.max(through, this.cache.get(id)?.through ?? -Infinity);
      (at < H - coldWindow ? restart : known).push(id);
    }
    const fresh = [...freshRows.map((r) => Number(r.id)), ...restart];
    if (restart.length) await this.loadLabels(c, restart);
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
        await this.loadLabels(reader, unreadable);
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
    await c.query(
      `UPDATE regress_pass SET passes = passes + 1, through = $1, started_at = $2, duration_ms = $3, result = $4`,
      [new Date(H), new Date(now), result.duration_ms, JSON.stringify(result)],
    );
    detectionSeriesScanned.inc(result.series.total);
    return result;
  }

  private async loadLabels(c: PoolClient, ids: number[]): Promise<void> {
    const missing = ids.filter((id) => !this.labels.has(id));
    if (!missing.length) return;
    const { rows } = await c.query<Labels & { id: number }>(
      `SELECT id, service, op, view, name, peer FROM series WHERE id = ANY($1::bigint[])`,
      [missing],
    );
    for (const r of rows)
      this.labels.set(Number(r.id), {
        service: r.service,
        op: r.op,
        view: r.view,
        name: r.name,
        peer: r.peer,
      });
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
    const stale = batch.filter(
      (id) => (this.cache.get(id)?.through ?? -Infinity) < dbThrough.get(id)!,
    );
    if (stale.length) {
      const stored = await readStates(c, stale);
      const rows = [...stored].map(([id, r]) => ({ id, ...r }));
      for (const r of rows) {
        try {
          this.cache.set(Number(r.id), {
            det: StepDetector.decode(r.state),
            through: Number(r.through),
          });
        } catch {
          // A state this version cannot read (the detector changed): start the series over.
          this.cache.delete(Number(r.id));
          unreadable.push(Number(r.id));
        }
      }
    }
    const work: BatchWork = { events: [], fed: new Map(), checkpoint: [] };
    let from = Infinity;
    const due: number[] = [];
    for (const id of batch) {
      const t = this.cache.get(id);
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
      const t = this.cache.get(id)!;
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
      if (!this.cache.has(id)) continue;
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
    await this.loadLabels(reader, batch);
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
      const labels = this.labels.get(id);
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
      this.cache.set(id, { det, through: H });
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
      // Buffers as individual parameters travel in binary; an array of them would be hex text.
      for (let i = 0; i < work.checkpoint.length; i += 500) {
        const ids = work.checkpoint.slice(i, i + 500);
        const args: unknown[] = [new Date(H)];
        const values = ids.map((id) => {
          const bytes = this.cache.get(id)!.det.encode();
          args.push(id, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
          return `($${args.length - 1}::bigint, $1::timestamptz, $${args.length}::bytea, now())`;
        });
        await c.query(
          `INSERT INTO regress_state (series_id, through, state, updated_at) VALUES ${values.join(', ')}
           ON CONFLICT (series_id) DO UPDATE SET through = EXCLUDED.through, state = EXCLUDED.state, updated_at = now()
            WHERE regress_state.through <= EXCLUDED.through`,
          args,
        );
      }
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
    const { rows: existing } = await c.query<{ series_id: number; onset: Date; unc: number }>(
      `SELECT series_id, onset, onset_uncertainty_ms AS unc FROM regressions WHERE series_id = ANY($1::bigint[])`,
      [ids],
    );
    await this.loadLabels(c, ids);
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
      const labels = this.labels.get(e.seriesId)!;
      const floor = detectOptionsFor(labels.view).floor ?? 0;
      const before = level(ch.before);
      const after = level(ch.after);
      const { rows: cnt } = await c.query<{ n: number }>(
        `SELECT coalesce(sum(count), 0)::float8 AS n FROM histograms WHERE series_id = $1 AND minute >= $2 AND minute < $3`,
        [e.seriesId, new Date(ch.t), new Date(H)],
      );
      after.count = Number(cnt[0]!.n);
      const { rows } = await c.query<RegressionRow>(
        `INSERT INTO regressions (series_id, service, op, view, name, peer, onset, onset_uncertainty_ms, detected_at, updated_at,
                                  metric, confidence, before, after, ratio_p50, ratio_p99, change, after_through)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         RETURNING ${REGRESSION_COLUMNS}`,
        [
          e.seriesId,
          labels.service,
          labels.op,
          labels.view,
          labels.name,
          labels.peer,
          new Date(ch.t),
          unc,
          new Date(now),
          ch.metric,
          round(ch.confidence, 6),
          JSON.stringify(before),
          JSON.stringify(after),
          ratio(before.p50_ms, after.p50_ms, floor / 1000),
          ratio(before.p99_ms, after.p99_ms, floor / 1000),
          JSON.stringify(ch),
          new Date(H),
        ],
      );
      const row = rows[0]!;
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
    const { rows } = await c.query<RegressionRow & { change: StepChange; after_through: Date }>(
      `SELECT ${REGRESSION_COLUMNS}, change, after_through FROM regressions
        WHERE series_id = ANY($1::bigint[]) AND status <> 'resolved' ORDER BY onset`,
      [ids],
    );
    for (const r of rows) {
      const sid = Number(r.series_id);
      const tracked = this.cache.get(sid);
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
      const resolvedAt = resolved ? new Date(pts[pts.length - 1]!.t + MIN) : null;
      await c.query(
        `UPDATE regressions SET after = $2, ratio_p50 = $3, ratio_p99 = $4, after_through = GREATEST(after_through, $5), updated_at = $6,
                status = CASE WHEN $7 THEN 'resolved' ELSE status END,
                resolved_at = CASE WHEN $7 THEN $8 ELSE resolved_at END,
                resolved_by = CASE WHEN $7 THEN 'onset' ELSE resolved_by END,
                resolution = CASE WHEN $7 THEN $9 ELSE resolution END
          WHERE id = $1 AND status <> 'resolved'`,
        [
          r.id,
          JSON.stringify(after),
          ratio(r.before.p50_ms, after.p50_ms, floor / 1000),
          ratio(r.before.p99_ms, after.p99_ms, floor / 1000),
          new Date(H),
          new Date(now),
          resolved,
          resolvedAt,
          resolved
            ? `latency returned to the before level (${r.metric} ${fmtMs(recovery.level / 1000)} ms)`
            : null,
        ],
      );
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
          const fresh = await c.query<RegressionRow>(
            `SELECT ${REGRESSION_COLUMNS} FROM regressions WHERE id = $1`,
            [r.id],
          );
          await raiseRegressionAlert(c, regressionJson(fresh.rows[0]!), { now });
        }
      }
    }
    // Opened on a series without new points in this pass (a zoomed old step): alert as is.
    for (const id of [...pendingAlerts]) {
      pendingAlerts.delete(id);
      const fresh = await c.query<RegressionRow>(
        `SELECT ${REGRESSION_COLUMNS} FROM regressions WHERE id = $1 AND status <> 'resolved'`,
        [id],
      );
      if (fresh.rows[0]) await raiseRegressionAlert(c, regressionJson(fresh.rows[0]), { now });
    }
  }

  /** Young regressions: markers posted late and more data after the onset can change suspects and cohort. */
  private async reattribute(
    c: PoolClient,
    H: number,
    now: number,
    _result: PassResult,
  ): Promise<void> {
    const { rows } = await c.query<RegressionRow>(
      `SELECT ${REGRESSION_COLUMNS} FROM regressions
        WHERE status <> 'resolved' AND detected_at > $1 AND (attributed_at IS NULL OR attributed_at < $2)`,
      [new Date(now - REATTRIBUTE_FOR_MS), new Date(now - 30_000)],
    );
    for (const r of rows) {
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

/**
 * Cohort split and ranked suspects for one regression, written to its row.
 * With `alert`, a changed top suspect or cohort refreshes the firing alert.
 */
export async function attribute(
  c: PoolClient,
  r: RegressionRow,
  H: number,
  now: number,
  opts: { alert: boolean },
): Promise<void> {
  const onset = r.onset.getTime();
  const unc = r.onset_uncertainty_ms;
  const floorUs = detectOptionsFor(r.view).floor ?? 0;
  const { rows: cohortRows } = await c.query<CohortRow & { after: boolean }>(
    `SELECT res.host, res.attrs, h.minute >= $3 AS after, h.idx, h.cnt
       FROM histograms h JOIN resources res ON res.id = h.resource_id
      WHERE h.series_id = $1
        AND ((h.minute >= $2 AND h.minute < $4) OR (h.minute >= $3 AND h.minute < $5))`,
    [
      r.series_id,
      new Date(onset - COHORT_WINDOW_MS),
      new Date(floorMinute(onset + unc) + MIN),
      new Date(Math.max(onset - COHORT_WINDOW_MS + MIN, floorMinute(onset - unc))),
      new Date(Math.min(H, onset + COHORT_WINDOW_MS)),
    ],
  );
  const cohort = findCohort(cohortRows, { metric: r.metric, floorUs });
  const { rows: hostRows } = await c.query<{ host: string }>(
    `SELECT DISTINCT res.host FROM series_resources sr JOIN resources res ON res.id = sr.resource_id
      WHERE sr.series_id = $1 AND res.host <> '' ORDER BY 1`,
    [r.series_id],
  );
  const hosts = hostRows.map((h) => h.host);
  const win = markerWindow(onset, unc);
  const { rows: markerRows } = await c.query<Omit<Marker, 'atMs'> & { at: Date }>(
    `SELECT id::text, service, hosts, kind, component, from_version, to_version, commit, url, description, at, source
       FROM deploys
      WHERE at >= $1 AND at <= $2 AND (service = $3 OR service = $4 OR hosts && $5::text[])`,
    [new Date(win.fromMs), new Date(win.toMs), r.service, r.peer || null, hosts],
  );
  const markers: Marker[] = markerRows.map(({ at, ...m }) => ({ ...m, atMs: at.getTime() }));
  const suspects = rankSuspects(markers, {
    onsetMs: onset,
    uncertaintyMs: unc,
    service: r.service,
    view: r.view,
    peer: r.peer || null,
    hosts,
    cohort,
  });
  const host =
    cohort && cohort.slow_hosts.length === 1 && cohort.fast_hosts.length > 0
      ? cohort.slow_hosts[0]!
      : null;
  const changed =
    JSON.stringify(suspects[0]?.deploy_id ?? null) !==
      JSON.stringify(r.suspects[0]?.deploy_id ?? null) ||
    JSON.stringify(cohort) !== JSON.stringify(r.cohort);
  const { rows } = await c.query<RegressionRow>(
    `UPDATE regressions SET suspects = $2, cohort = $3, host = $4, attributed_at = $5 WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
    [r.id, JSON.stringify(suspects), cohort ? JSON.stringify(cohort) : null, host, new Date(now)],
  );
  if (opts.alert && changed && rows[0] && rows[0].status !== 'resolved') {
    await refreshRegressionAlertIfFiring(c, regressionJson(rows[0]), { now });
  }
}

function level(l: { p50: number; p99: number; count: number }): Level {
  return { p50_ms: roundMs(l.p50 / 1000), p99_ms: roundMs(l.p99 / 1000), count: l.count };
}

function ratio(before: number, after: number, floorMs: number): number {
  const r = before > 0 ? after / before : (after + floorMs) / (before + floorMs || 1);
  return round(r, 3);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));
const roundMs = (ms: number) => Number(ms.toPrecision(4));
const fmtMs = (ms: number) => String(Number(ms.toPrecision(3)));

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
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    if (opts.wait === false) {
      const { rows } = await client.query<{ ok: boolean }>(
        `SELECT pg_try_advisory_lock($1) AS ok`,
        [LOCK_KEY],
      );
      if (!rows[0]!.ok) {
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
    } else {
      await client.query(`SELECT pg_advisory_lock($1)`, [LOCK_KEY]);
    }
    try {
      const r = await engine.pass(pool, client, opts);
      end({ result: 'ok' });
      return r;
    } catch (err) {
      // In-memory detectors may be ahead of what was committed: start again from the checkpoints.
      engine.reset();
      end({ result: 'error' });
      throw err;
    } finally {
      await client.query(`SELECT pg_advisory_unlock($1)`, [LOCK_KEY]).catch((e: Error) => {
        broken = e;
      });
    }
  } finally {
    // A connection that failed mid-pass is dropped, which also releases the lock.
    client.release(broken);
  }
}
