/**
 * The day an ingest transaction receives its spans on, made safe across
 * midnight. Spans are unique per (trace_id, span_id, received_day), so a retry
 * received the day after its original is caught only by looking at the
 * previous day's partition (write-spans.ts), and a look sees only what is
 * committed. Two rules keep a retry counted once while its original is still
 * in flight (a loaded server, a client that timed out and sent again):
 *
 * - Every ingest transaction holds its day's advisory lock, shared, from its
 *   start to its end, and reads the day from the database's clock under it:
 *   a transaction dated a day that is already over (its server read the clock
 *   just before midnight, or runs behind the database) starts again on the
 *   new day, where the unique key sees the retry.
 * - A transaction that looks at the previous day first waits for every
 *   transaction still writing that day to end (it takes the previous day's
 *   lock exclusively and lets go at once, so such transactions never wait
 *   for each other).
 *
 * One clock (the database's) decides for every server on it. The cost is one
 * statement sent with BEGIN: no extra round trip (which is why this BEGIN is
 * written here and not taken from db/pool.ts's withTransaction, whose BEGIN is
 * a statement of its own; write-spans.ts commits or rolls back).
 */
import type { PoolClient } from '../db/pool.ts';

/** First key of the received-day locks (second key: days since 1970-01-01). */
export const RECEIVED_DAY_LOCK_CLASS = 0x0de7ed0;

const DAY_MS = 86_400_000;

/** The database says the transaction's day is over: write it again on `day`. */
export class DayMoved extends Error {
  constructor(readonly day: string) {
    super(`the received day moved to ${day}`);
  }
}

const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS;

/**
 * BEGIN a transaction receiving spans on `day` (YYYY-MM-DD, UTC). With
 * `confirmDay`, throws DayMoved (the transaction rolled back) when the
 * database's clock is on another day; without it the caller's day is kept
 * (tests and benches writing a given day). With `previousDay`, returns only
 * once every transaction writing the day before has ended.
 */
export async function beginReceived(
  client: PoolClient,
  day: string,
  opts: { confirmDay: boolean; previousDay: boolean },
): Promise<void> {
  const n = dayNumber(day);
  const statements = ['BEGIN', receivedDayStatement(day, { confirmDay: opts.confirmDay })];
  // The sub-select with OFFSET 0 is evaluated first: the barrier's lock is let go only after it
  // was granted.
  if (opts.previousDay)
    statements.push(
      `SELECT pg_advisory_unlock(${RECEIVED_DAY_LOCK_CLASS}, ${n - 1})
         FROM (SELECT pg_advisory_lock(${RECEIVED_DAY_LOCK_CLASS}, ${n - 1}) OFFSET 0) l`,
    );
  try {
    await client.query(statements.join(';\n'));
  } catch (err) {
    const moved = dayMovedBy(err);
    if (!moved) throw err;
    await client.query('ROLLBACK');
    throw moved;
  }
}

/** SQLSTATE of receivedDayStatement's error (a class of its own: nothing else raises it). */
const DAY_MOVED_STATE = 'ORD01';

/**
 * The day's lock and check as ONE statement, for beginReceived and for a transaction sent whole
 * (write-spans.ts pipelines it with its COPYs and COMMIT): the day's lock taken shared, then,
 * with `confirmDay`, the clock read under it and an error naming the database's day when that
 * is not `day`, which aborts everything after it in the transaction. `dayMovedBy(err)` turns
 * that error back into DayMoved.
 */
export function receivedDayStatement(day: string, opts: { confirmDay: boolean }): string {
  const n = dayNumber(day);
  if (!Number.isInteger(n)) throw new Error(`not a day: ${day}`);
  const check = opts.confirmDay
    ? `d := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD');
       IF d <> '${day}' THEN
         RAISE EXCEPTION USING ERRCODE = '${DAY_MOVED_STATE}', MESSAGE = 'the received day moved to ' || d, DETAIL = d;
       END IF;`
    : '';
  return `DO $onset$ DECLARE d text; BEGIN
       PERFORM pg_advisory_xact_lock_shared(${RECEIVED_DAY_LOCK_CLASS}, ${n});
       ${check}
     END $onset$`;
}

/** The DayMoved that receivedDayStatement's error stands for, if it is that error. */
export function dayMovedBy(err: unknown): DayMoved | undefined {
  const e = err as { code?: string; detail?: string } | null;
  return e?.code === DAY_MOVED_STATE && e.detail ? new DayMoved(e.detail) : undefined;
}
