import pg from 'pg';
import { sqlState } from './citus.ts';

// int8 -> number: counts and ids here stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric -> number (aggregates like sum()).
pg.types.setTypeParser(1700, (v) => Number(v));
// int4[] / int8[] (histogram buckets) -> number[]. Our integer arrays never hold
// NULLs, and JSON.parse is ~10x faster than the generic array parser, which
// dominated long-range quantile queries.
const parseIntArray = (v: string): number[] => JSON.parse(`[${v.slice(1, -1)}]`);
// (OIDs 1007 int4[] and 1016 int8[]; pg's TypeId enum lists only scalar types.)
pg.types.setTypeParser(1007 as never, parseIntArray);
pg.types.setTypeParser(1016 as never, parseIntArray);

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Either the pool (each query on its own) or a client inside a transaction: what store functions take. */
export type Queryable = Pool | PoolClient;

/**
 * `citusCachedConns` (on a Citus coordinator only): each session of the pool sets
 * `citus.max_cached_conns_per_worker` to it, so the coordinator keeps that many connections to
 * each worker between transactions instead of opening new ones for nearly every ingest
 * transaction (docs/citus.md). The setting is user-settable; a session's value wins over
 * `ALTER DATABASE … SET`.
 */
export function createPool(
  url: string,
  max = 20,
  opts: { citusCachedConns?: number } = {},
): pg.Pool {
  const options = opts.citusCachedConns
    ? `-c citus.max_cached_conns_per_worker=${Math.trunc(opts.citusCachedConns)}`
    : undefined;
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 5000,
    ...(options ? { options } : {}),
  });
  // A client erroring (e.g. the database restarting) must not crash the process: idle ones
  // emit on the pool, checked-out ones on themselves (the query in flight gets the error).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * PostgreSQL refused a statement (severity ERROR): the transaction is aborted, nothing of it
 * committed, and the connection lives on. A FATAL error or a socket's failure leaves a COMMIT in
 * flight of unknown outcome.
 */
export function isStatementError(err: unknown): boolean {
  return (err as { severity?: string } | null)?.severity === 'ERROR';
}

/** Errors that mean "the database is not there right now" rather than "this request is wrong". */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (!e) return false;
  // On Citus a worker's connection failure comes relayed as XX000 (db/citus.ts).
  const code = sqlState(err);
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      '57P01',
      '57P02',
      '57P03',
      '53300',
      '08000',
      '08003',
      '08006',
      '08001',
      '08004',
    ].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      e.message ?? '',
    )
  );
}

/**
 * `fn` in one transaction: the caller's when `db` is a client (a PoolClient is
 * taken to be inside the caller's transaction: `fn` joins it, and the caller
 * commits or rolls back), else a new one on a client from the pool, committed
 * when `fn` returns and rolled back when it throws.
 */
export async function withTransaction<T>(
  db: Queryable,
  fn: (c: pg.PoolClient) => Promise<T>,
): Promise<T> {
  if (isClient(db)) return fn(db);
  const client = await db.connect();
  try {
    return await transactionOn(client, fn);
  } finally {
    client.release();
  }
}

/**
 * BEGIN, `fn`, COMMIT on a client the caller holds outside any transaction (and
 * keeps: it is not released), ROLLBACK when `fn` throws. For work that holds one
 * connection across transactions (a detection pass, its session-level lock).
 */
export async function transactionOn<T>(
  client: pg.PoolClient,
  fn: (c: pg.PoolClient) => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  try {
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

function isClient(db: Queryable): db is pg.PoolClient {
  return 'release' in db && typeof db.release === 'function';
}
