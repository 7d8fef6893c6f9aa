/**
 * A full detection run, as POST /api/v1/detect and the scheduler do it:
 * pair client and server spans into edge series, infer deploy markers from
 * telemetry, then the detection pass (which attributes with those markers).
 *
 * Across servers (lock.ts): pairing and inference hold the run lock
 * exclusively, the pass holds it shared, so the passes of several servers
 * run side by side but never beside a pairing pass. A scheduled run feeds the
 * shards its server leases (shards.ts); POST /api/v1/detect every shard
 * unless asked for its server's own.
 */
import type { Pool, PoolClient } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import {
  pairEdges,
  pairingCursorMs,
  pairingProgressOf,
  PAIRING_LAG_MS,
  type PairingResult,
} from '../edges/pairing.ts';
import { progressOf } from './budget.ts';
import { inferMarkers, type InferResult } from '../deploys/infer.ts';
import type { Registry } from '../otlp/registry.ts';
import { MINUTE_LATENESS_MS } from './detect-options.ts';
import { runDetectionPass, type PassOptions, type PassResult } from './engine.ts';
import { lockRun, tryLockRun, unlockRun } from './lock.ts';
import type { ShardLeases } from './shards.ts';

export interface DetectRunResult {
  pairing: PairingResult;
  inference: InferResult;
  detection: PassResult;
}

/**
 * Arrivals up to this instant can be paired without missing any: no ingest
 * transaction that is still open can commit rows received earlier (rows take
 * their transaction's start time). Read from PostgreSQL's own clock.
 */
export async function settledArrivalMs(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ ms: number }>(
    `SELECT (extract(epoch FROM LEAST(clock_timestamp(),
              coalesce((SELECT min(xact_start) FROM pg_stat_activity
                         WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
                           AND backend_type = 'client backend'), clock_timestamp()))) * 1000)::float8 - 1 AS ms`,
  );
  // Whole milliseconds: the pairing cursor is stored at millisecond precision.
  return Math.floor(Number(rows[0]!.ms));
}

/** A long run (a pairing backlog, a cold start over many series) says how far it is this often. */
const PROGRESS_LOG_MS = 10_000;
/**
 * A scheduled run that finds another server pairing (or passing) goes on
 * without pairing itself, unless the last pairing is this old: then it waits
 * its turn, so passes that keep overlapping cannot starve pairing.
 */
const PAIRING_STALE_MS = 2 * 60_000;

interface ProgressLog {
  info(obj: object, msg: string): void;
}

type Deps = { pool: Pool; registry: Registry; partitions: Partitions };
type RunOptions = PassOptions & {
  pairUptoMs?: number;
  log?: ProgressLog;
  /** Feed only these shards (default: every shard). */
  shards?: readonly number[];
  /** The shard count a cluster without one is given (ONSET_DETECT_SHARDS). */
  shardCount?: number;
};

/**
 * A whole run over every shard (or `opts.shards`), waiting for pairing by
 * other servers and for the shards' passes to finish first (POST /api/v1/detect).
 */
export async function runDetect(deps: Deps, opts: RunOptions = {}): Promise<DetectRunResult> {
  return logged(deps.pool, opts.log, () =>
    withRunLock(deps.pool, async (lock) => {
      await lock.take('exclusive');
      const { pairing, inference } = await pairAndInfer(deps, opts.pairUptoMs);
      await lock.downgrade();
      const detection = await runDetectionPass(deps.pool, { ...opts, wait: true });
      return { pairing, inference, detection };
    }),
  );
}

/**
 * The scheduler's run on one server: pair and infer unless another server is
 * doing it (or passing), then a pass over the shards this server leases that
 * no other pass holds now. Without pairing of its own, the pass stops where
 * the last committed pairing lets it (arrivals paired up to 15 s after a
 * minute's end, as if this run had paired). Null when the server holds no shard.
 */
export async function scheduledRun(
  deps: Deps & { leases: ShardLeases },
  opts: { log?: ProgressLog; now?: number } = {},
): Promise<DetectRunResult | null> {
  const { pool, leases } = deps;
  if (!leases.owned.length) return null;
  const now = opts.now ?? Date.now();
  let uptoMs = now - MINUTE_LATENESS_MS;
  return logged(pool, opts.log, () =>
    withRunLock(pool, async (lock) => {
      let paired = await lock.tryExclusive();
      let cursor: number | null = null;
      if (!paired) {
        // Another server is pairing (wait for it to finish) or passing (go on beside it).
        await lock.take('shared');
        cursor = await pairingCursorMs(lock.client);
        if (cursor === null || cursor < now - PAIRING_STALE_MS) {
          // Nobody paired lately (passes kept the lock shared): wait for a turn to pair.
          await lock.release();
          await lock.take('exclusive');
          paired = true;
        }
      }
      let pairing: PairingResult = { pairs: 0, edges: 0, cursor: '', folded: 0 };
      let inference: InferResult = { resources: 0, changes: 0, created: 0, extended: 0 };
      if (paired) {
        ({ pairing, inference } = await pairAndInfer(deps));
        await lock.downgrade();
      } else {
        pairing = { ...pairing, cursor: new Date(cursor!).toISOString() };
        uptoMs = Math.min(uptoMs, cursor! + PAIRING_LAG_MS - MINUTE_LATENESS_MS);
      }
      const detection = await runDetectionPass(pool, {
        uptoMs,
        wait: false,
        shards: leases.owned,
        shardCount: leases.count,
      });
      // A pass over every owned shard counted their series: the gauge is exact until the next renewal.
      if (detection.shards?.run === leases.owned.length) leases.noteSeries(detection.series.total);
      return { pairing, inference, detection };
    }),
  );
}

async function pairAndInfer(
  deps: Deps,
  pairUptoMs?: number,
): Promise<{ pairing: PairingResult; inference: InferResult }> {
  const { pool, registry, partitions } = deps;
  const pairing = await pairEdges(
    pool,
    registry,
    partitions,
    pairUptoMs !== undefined ? { uptoMs: pairUptoMs } : {},
  );
  const inference = await inferMarkers(pool);
  return { pairing, inference };
}

/** The run lock as one run holds it, on its own connection. */
class RunLock {
  private held = { exclusive: false, shared: false };
  constructor(readonly client: PoolClient) {}

  async take(mode: 'exclusive' | 'shared'): Promise<void> {
    await lockRun(this.client, mode);
    this.held[mode] = true;
  }

  async tryExclusive(): Promise<boolean> {
    this.held.exclusive = await tryLockRun(this.client);
    return this.held.exclusive;
  }

  /** Exclusive to shared with no gap: no other server pairs in between. */
  async downgrade(): Promise<void> {
    await this.take('shared');
    await unlockRun(this.client, 'exclusive');
    this.held.exclusive = false;
  }

  async release(): Promise<void> {
    if (this.held.exclusive) await unlockRun(this.client, 'exclusive');
    if (this.held.shared) await unlockRun(this.client, 'shared');
    this.held = { exclusive: false, shared: false };
  }
}

async function withRunLock<T>(pool: Pool, run: (lock: RunLock) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const lock = new RunLock(client);
  let broken: Error | undefined;
  try {
    return await run(lock);
  } finally {
    // A connection whose unlock failed is dropped, which releases its locks too.
    await lock.release().catch((e: Error) => {
      broken = e;
    });
    client.release(broken);
  }
}

async function logged<T>(pool: Pool, log: ProgressLog | undefined, run: () => Promise<T>) {
  const ticker = log
    ? setInterval(() => {
        const pairing = pairingProgressOf(pool);
        if (pairing)
          log.info(
            pairing,
            `pairing pass: ${pairing.pairs} calls paired, arrivals up to ${pairing.cursor}`,
          );
        const p = progressOf(pool);
        if (p) log.info(p, `detection pass: ${p.series_done}/${p.series_total} series`);
      }, PROGRESS_LOG_MS)
    : undefined;
  try {
    return await run();
  } finally {
    clearInterval(ticker);
  }
}
