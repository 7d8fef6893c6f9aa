/**
 * A full detection run, as POST /api/v1/detect and the scheduler do it:
 * pair client and server spans into edge series, infer deploy markers from
 * telemetry, then the detection pass (which attributes with those markers).
 */
import type { Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import { pairEdges, pairingProgressOf, type PairingResult } from '../edges/pairing.ts';
import { progressOf } from './budget.ts';
import { inferMarkers, type InferResult } from '../deploys/infer.ts';
import type { Registry } from '../otlp/registry.ts';
import { runDetectionPass, type PassOptions, type PassResult } from './engine.ts';
import { RUN_LOCK_KEY, withPassLock } from './lock.ts';

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

interface ProgressLog {
  info(obj: object, msg: string): void;
}

type RunOptions = PassOptions & { pairUptoMs?: number; log?: ProgressLog };

/** A whole run, waiting for another server's run to finish first (POST /api/v1/detect). */
export async function runDetect(
  deps: { pool: Pool; registry: Registry; partitions: Partitions },
  opts: RunOptions = {},
): Promise<DetectRunResult> {
  return (await lockedRun(deps, opts, true))!;
}

/** A whole run, or null at once when another server's run is under way (the scheduler's). */
export function tryRunDetect(
  deps: { pool: Pool; registry: Registry; partitions: Partitions },
  opts: RunOptions = {},
): Promise<DetectRunResult | null> {
  return lockedRun(deps, opts, false);
}

function lockedRun(
  deps: { pool: Pool; registry: Registry; partitions: Partitions },
  opts: RunOptions,
  wait: boolean,
): Promise<DetectRunResult | null> {
  return withPassLock(deps.pool, wait, () => loggedRun(deps, opts), RUN_LOCK_KEY);
}

async function loggedRun(
  deps: { pool: Pool; registry: Registry; partitions: Partitions },
  opts: RunOptions,
): Promise<DetectRunResult> {
  const { pool } = deps;
  const log = opts.log;
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
    return await detectRun(deps, opts);
  } finally {
    clearInterval(ticker);
  }
}

async function detectRun(
  deps: { pool: Pool; registry: Registry; partitions: Partitions },
  opts: PassOptions & { pairUptoMs?: number },
): Promise<DetectRunResult> {
  const { pool, registry, partitions } = deps;
  const pairing = await pairEdges(
    pool,
    registry,
    partitions,
    opts.pairUptoMs !== undefined ? { uptoMs: opts.pairUptoMs } : {},
  );
  const inference = await inferMarkers(pool);
  const detection = await runDetectionPass(pool, opts);
  return { pairing, inference, detection };
}
