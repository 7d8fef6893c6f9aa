import pg from 'pg';

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

export function createPool(url: string, max = 20): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5000 });
  // A client erroring (e.g. the database restarting) must not crash the process: idle ones
  // emit on the pool, checked-out ones on themselves (the query in flight gets the error).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Errors that mean "the database is not there right now" rather than "this request is wrong". */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (!e) return false;
  const code = e.code ?? '';
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

export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (c: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
