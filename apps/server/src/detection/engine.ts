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
 * Shared across servers (docs/scaling.md "N servers on one PostgreSQL"): a
 * pass feeds the series of some shards (series_id % count, shards.ts), holding
 * an advisory lock per shard (lock.ts) so no two passes feed one series at
 * once; a scheduled pass feeds the shards its server leases, POST
 * /api/v1/detect every shard. Each series' detector is fed by one pass at a
 * time, and commits that touch regressions take one cluster-wide lock.
 * The pass's parts live in their own modules: feeding known series
 * (feed-known.ts) and new ones (cold-start.ts), what steps do to the
 * regressions table (commit.ts), the in-memory detectors (state-cache.ts),
 * their stored states (state.ts), the regressions table (store.ts),
 * attribution (attribute.ts, scoring in core) and alerting (alerting.ts).
 * This file is the pass itself: batches, connections, and the order of
 * reads, feeds and commits.
 */
import type { Pool, PoolClient } from '../db/pool.ts';
import { detectionPassSeconds, detectionSeriesScanned } from '../observability/metrics.ts';
import { computeFresh, fetchFresh } from './cold-start.ts';
import { commit, reattribute } from './commit.ts';
import { feedKnown, readKnown } from './feed-known.ts';
import { lockShards, unlockShards } from './lock.ts';
import { clusterShardCount } from './shards.ts';
import { detectBudget } from '../config.ts';
import { beginProgress, endProgress, recordFinished } from './budget.ts';
import { StateCache } from './state-cache.ts';
import { recordPass, type ShardFilter } from './state.ts';
import { StoredIndex } from './stored-index.ts';
import {
  floorMinute,
  HOUR_MS as HOUR,
  MINUTE_MS as MIN,
  type BatchWork,
  type PassOptions,
  type PassResult,
} from './work.ts';

export type { PassOptions, PassResult } from './work.ts';

class Engine {
  readonly cache = new StateCache();
  /** Checkpoint times and series of the shards fed last, kept between passes (stored-index.ts). */
  readonly index = new StoredIndex();

  /** In-memory detectors and checkpoint times may be ahead of what was committed: start again from the database. */
  reset(): void {
    this.cache.reset();
    this.index.reset();
  }

  /** One pass over the series of the shards `held` (`scope`; null: every series), whose locks `c` holds. */
  async pass(
    pool: Pool,
    c: PoolClient,
    opts: PassOptions,
    scope: ShardFilter | null,
    held: readonly number[],
    shards: { count: number; run: number },
  ): Promise<PassResult> {
    const started = performance.now();
    const now = opts.now ?? Date.now();
    const H = floorMinute(opts.uptoMs ?? now - (opts.lagMs ?? MIN));
    const coldWindow = opts.coldWindowMs ?? 6 * HOUR;
    const lookback = Math.max(coldWindow, opts.lookbackMs ?? 7 * 24 * HOUR);
    const budget = detectBudget();
    const batchSize = opts.batchSize ?? budget.batchSize;
    const result: PassResult = {
      through: new Date(H).toISOString(),
      duration_ms: 0,
      series: { total: 0, new: 0, fed: 0, points: 0 },
      screened: 0,
      shards,
      regressions: { opened: 0, resolved: 0, updated: 0, grouped: 0, held: 0 },
    };

    // Detectors of series outside the scope (shards another server holds now) go too.
    const { stored: dbThrough, fresh: freshIds } = await this.index.begin(
      c,
      shards.count,
      held,
      scope,
    );
    this.cache.keepStored(dbThrough);

    // A state too far behind (the engine was off for a long time) starts over like a new series.
    const known: number[] = [];
    const restart: number[] = [];
    for (const [id, through] of dbThrough) {
      const at = Math.max(through, this.cache.detectors.get(id)?.through ?? -Infinity);
      (at < H - coldWindow ? restart : known).push(id);
    }
    const fresh = [...freshIds, ...restart];
    result.series.total = known.length + fresh.length;
    result.series.new = fresh.length;
    const progress = beginProgress(pool, result.series.total);
    // After each batch: count it, and keep the detector cache within its memory budget.
    const batchDone = (n: number) => {
      progress.series_done = Math.min(progress.series_total, progress.series_done + n);
      this.cache.trim(budget.cacheMaxSeries, dbThrough);
    };

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
      pending = track(commit(this.cache, c, work, H, now, dbThrough, result));
      pending.catch(() => {});
    };
    try {
      const unreadable: number[] = [];
      const readAhead = (i: number) => {
        if (i >= known.length) return undefined;
        const p = track(readKnown(this.cache, reader, known.slice(i, i + batchSize), dbThrough, H));
        p.catch(() => {});
        return p;
      };
      let ahead = readAhead(0);
      for (let i = 0; i < known.length; i += batchSize) {
        const read = ahead;
        // The next batch's minutes are read while this one is fed and committed.
        ahead = readAhead(i + batchSize);
        const work = await feedKnown(
          this.cache,
          reader,
          known.slice(i, i + batchSize),
          dbThrough,
          H,
          result,
          unreadable,
          this.cache.detectors.size + batchSize > budget.cacheMaxSeries,
          read,
        );
        await commitLater(work);
        batchDone(Math.min(batchSize, known.length - i));
      }
      if (unreadable.length) {
        fresh.push(...unreadable);
        result.series.new += unreadable.length;
      }
      const coldFrom = H - coldWindow;
      const fetch = (batch: number[]) => {
        const p = track(
          fetchFresh(
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
        const work = await computeFresh(this.cache, zoomer, batch, data, H, coldFrom, result);
        await commitLater(work);
        batchDone(batch.length);
      }
      if (pending) await pending;
    } finally {
      // Never hand a connection back with a COPY or a transaction still running on it.
      await Promise.all([...inflight]);
      reader.release();
      zoomer?.release();
      endProgress(pool);
    }
    this.cache.trim(budget.cacheMaxSeries, dbThrough, true);
    // Every batch is committed: the next pass may trust what this one kept of these shards.
    await this.index.end(c, held);
    await reattribute(c, H, now, result, scope);

    result.duration_ms = Math.round(performance.now() - started);
    await recordPass(c, H, now, result.duration_ms, result);
    recordFinished(pool, { ...result, started_at: new Date(now).toISOString() });
    detectionSeriesScanned.inc(result.series.total);
    return result;
  }
}

const engines = new WeakMap<Pool, Engine>();
function engineFor(pool: Pool): Engine {
  let e = engines.get(pool);
  if (!e) engines.set(pool, (e = new Engine()));
  return e;
}

/** Detectors this process keeps in memory for the pool's passes (budget.ts bounds it). */
export function cachedDetectors(pool: Pool): number {
  return engines.get(pool)?.cache.detectors.size ?? 0;
}

/** Options of one pass: which shards (default every one) and whether to wait for their locks. */
export type DetectionPassOptions = PassOptions & {
  /** false: feed only the shards free now (the scheduler's); skipped when none is. */
  wait?: boolean;
  /** Shards to feed (default: every shard of the cluster). */
  shards?: readonly number[];
  /** The shard count a cluster without one is given (ONSET_DETECT_SHARDS). */
  shardCount?: number;
};

/**
 * Run one detection pass over the given shards (default all). With `wait:
 * false` (the scheduler), feed only the shards no other pass holds now, and
 * return `{skipped: true}` when that is none; otherwise wait for them (POST
 * /api/v1/detect must answer with all data examined).
 */
export async function runDetectionPass(
  pool: Pool,
  opts: DetectionPassOptions = {},
): Promise<PassResult> {
  const engine = engineFor(pool);
  const end = detectionPassSeconds.startTimer();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const count = await clusterShardCount(client, opts.shardCount);
    const wanted = opts.shards
      ? [...new Set(opts.shards)].filter((s) => s >= 0 && s < count)
      : Array.from({ length: count }, (_, i) => i);
    const held = wanted.length ? await lockShards(client, wanted, opts.wait !== false) : [];
    try {
      if (held.length) {
        const scope = held.length === count ? null : { count, shards: held };
        const r = await engine.pass(pool, client, opts, scope, held, { count, run: held.length });
        end({ result: 'ok' });
        return r;
      }
    } catch (err) {
      // In-memory detectors may be ahead of what was committed: start again from the checkpoints.
      engine.reset();
      end({ result: 'error' });
      throw err;
    } finally {
      await unlockShards(client, held).catch((e: Error) => {
        broken = e;
      });
    }
    end({ result: 'ok' });
    const H = floorMinute(opts.uptoMs ?? (opts.now ?? Date.now()) - (opts.lagMs ?? MIN));
    return {
      skipped: true,
      through: new Date(H).toISOString(),
      duration_ms: 0,
      series: { total: 0, new: 0, fed: 0, points: 0 },
      screened: 0,
      shards: { count, run: 0 },
      regressions: { opened: 0, resolved: 0, updated: 0, grouped: 0, held: 0 },
    };
  } catch (err) {
    // Never hand back a connection that may still hold a shard lock.
    broken ??= err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}
