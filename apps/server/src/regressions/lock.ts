/**
 * One detection pass at a time across every server process: a session
 * advisory lock on the pass's own connection.
 */
import type { Pool, PoolClient } from '../db/pool.ts';

/** Any two server processes use the same keys. */
const LOCK_KEY = 0x0de7ec7;
/**
 * A whole run (pairing, marker inference, detection) holds this one: a pass on one server must
 * not move its series past minutes another server is still pairing into edge series.
 */
export const RUN_LOCK_KEY = 0x0de7ec8;

/**
 * Run `pass` holding the lock, on the connection that holds it. With
 * `wait: false`, answer null at once when another pass holds it. A
 * connection whose unlock failed is dropped, which releases the lock too.
 */
export async function withPassLock<T>(
  pool: Pool,
  wait: boolean,
  pass: (client: PoolClient) => Promise<T>,
  key: number = LOCK_KEY,
): Promise<T | null> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    if (!wait) {
      const { rows } = await client.query<{ ok: boolean }>(
        `SELECT pg_try_advisory_lock($1) AS ok`,
        [key],
      );
      if (!rows[0]!.ok) return null;
    } else {
      await client.query(`SELECT pg_advisory_lock($1)`, [key]);
    }
    try {
      return await pass(client);
    } finally {
      await client.query(`SELECT pg_advisory_unlock($1)`, [key]).catch((e: Error) => {
        broken = e;
      });
    }
  } finally {
    client.release(broken);
  }
}
