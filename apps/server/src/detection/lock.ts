/**
 * Advisory locks of detection runs across every server process (session
 * locks on the run's own connection; docs/scaling.md "N servers on one
 * PostgreSQL"):
 *
 * - RUN_LOCK_KEY: pairing and marker inference take it exclusively, a
 *   detection pass takes it shared. Passes of several servers run side by
 *   side, but never beside a pairing pass: a pass must not move its series
 *   past minutes another server is still pairing into edge series (regress.test.ts
 *   "two servers passing at once").
 * - One lock per shard (SHARD_LOCK_CLASS, shard): a pass holds those of the
 *   shards it feeds, so two servers never feed one series at once (a server
 *   that lost a lease mid-pass and its successor, or POST /api/v1/detect over
 *   every shard beside a scheduled pass).
 * - COMMIT_LOCK_KEY (transaction lock): a batch that opens, groups, updates or
 *   resolves regressions takes it, so grouping (one regression per incident,
 *   across shards) sees every other shard's committed steps.
 */
import type { Pool, PoolClient } from '../db/pool.ts';

/**
 * A whole run (pairing, marker inference) holds this one exclusively, a
 * detection pass shared.
 */
export const RUN_LOCK_KEY = 0x0de7ec8;
/** With the shard number: the two-key form, apart from the one-key locks above. */
export const SHARD_LOCK_CLASS = 0x0de7ecb;
export const COMMIT_LOCK_KEY = 0x0de7ecc;

/**
 * Run `work` on one connection, handed to it; a connection whose unlock
 * failed is dropped (which releases its session locks too).
 */
export async function onLockConnection<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    return await work(client);
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}

export async function lockRun(c: PoolClient, mode: 'exclusive' | 'shared'): Promise<void> {
  await c.query(
    mode === 'exclusive' ? `SELECT pg_advisory_lock($1)` : `SELECT pg_advisory_lock_shared($1)`,
    [RUN_LOCK_KEY],
  );
}

export async function tryLockRun(c: PoolClient): Promise<boolean> {
  const { rows } = await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock($1) AS ok`, [
    RUN_LOCK_KEY,
  ]);
  return rows[0]!.ok;
}

export async function unlockRun(c: PoolClient, mode: 'exclusive' | 'shared'): Promise<void> {
  await c.query(
    mode === 'exclusive' ? `SELECT pg_advisory_unlock($1)` : `SELECT pg_advisory_unlock_shared($1)`,
    [RUN_LOCK_KEY],
  );
}

/**
 * Lock these shards: waiting for each in ascending order (no two waiters
 * deadlock), or with `wait: false` only those free now. Returns the shards held.
 */
export async function lockShards(
  c: PoolClient,
  shards: readonly number[],
  wait: boolean,
): Promise<number[]> {
  const sorted = [...shards].sort((a, b) => a - b);
  if (wait) {
    for (const s of sorted) await c.query(`SELECT pg_advisory_lock($1, $2)`, [SHARD_LOCK_CLASS, s]);
    return sorted;
  }
  const { rows } = await c.query<{ s: number }>(
    `SELECT s FROM unnest($2::int[]) AS u(s) WHERE pg_try_advisory_lock($1, s)`,
    [SHARD_LOCK_CLASS, sorted],
  );
  return rows.map((r) => r.s).sort((a, b) => a - b);
}

export async function unlockShards(c: PoolClient, shards: readonly number[]): Promise<void> {
  if (!shards.length) return;
  await c.query(`SELECT pg_advisory_unlock($1, s) FROM unnest($2::int[]) AS u(s)`, [
    SHARD_LOCK_CLASS,
    shards,
  ]);
}

/** Inside a transaction: wait for other servers' regression writes (released at commit). */
export async function lockRegressionCommit(c: PoolClient): Promise<void> {
  await c.query(`SELECT pg_advisory_xact_lock($1)`, [COMMIT_LOCK_KEY]);
}
