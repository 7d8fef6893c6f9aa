/**
 * An OTLP retry counted once across midnight, also while the original is in
 * flight. Spans are unique per (trace_id, span_id, received_day), so a retry
 * received the day after its original is caught by looking at the previous
 * day's partition (write-spans.ts) — which sees only what is committed. Here
 * the original's transaction (received just before midnight) has its spans in
 * yesterday's partition but cannot commit (a session holds a lock on
 * `histograms`), as on a loaded server whose client timed out and sent again;
 * the retry is received after midnight. And the other order: a transaction
 * whose server still thinks it is yesterday starts only after the retry was
 * stored today.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool, type PoolClient } from '../src/db/pool.ts';
import { Partitions, utcDay } from '../src/db/partitions.ts';
import { CopyRows } from '../src/otlp/copy-rows.ts';
import { GroupCommit } from '../src/otlp/group-commit.ts';
import type { SpanBatch } from '../src/otlp/span-folds.ts';
import { writeSpans } from '../src/otlp/write-spans.ts';

const DAY_MS = 86_400_000;
let pool: Pool;
let parts: Partitions;
const now = Date.now();
const today = utcDay(now);
const yesterday = utcDay(now - DAY_MS);
/** Just before midnight: spans a client sent then, retried after it. */
const lateYesterday = Date.parse(`${today}T00:00:00Z`) - 5_000;

beforeAll(async () => {
  const url = await createTestDatabase('onset_midnight_retry');
  await migrate(url);
  pool = createPool(url);
  parts = new Partitions(pool);
  for (const t of ['observations', 'span_durations'] as const)
    await parts.ensure(t, [yesterday, today]);
  await parts.ensure('histograms', [yesterday]);
});
afterAll(async () => {
  await pool?.end();
});

/**
 * Server spans of trace `trace` with span ids from..to-1, started just before midnight, each
 * lasting trace ms + its id in µs (so each case's histograms and durations are told apart).
 */
function rows(trace: number, from: number, to: number): Buffer {
  const r = new CopyRows(64);
  for (let i = from; i < to; i++) {
    const span = Buffer.alloc(8);
    span.writeUInt32BE(i, 4);
    r.reserve(200);
    r.row(10);
    r.bytes(Buffer.alloc(16, trace));
    r.bytes(span);
    r.null();
    r.int8(1);
    r.int8(1);
    r.timestampMs(lateYesterday + i);
    r.float8(trace * 1000 + i);
    r.int2(2);
    r.null();
    r.reserve(5);
    r.bool(false);
  }
  return Buffer.from(r.view());
}

/** What a user would count of trace `trace`: raw spans, histogram counts and SLO durations. */
async function counted(trace: number) {
  const id = Buffer.alloc(16, trace);
  const { rows: c } = await pool.query(
    `SELECT (SELECT count(*)::int FROM observations WHERE trace_id = $1) AS spans,
            (SELECT count(DISTINCT span_id)::int FROM observations WHERE trace_id = $1) AS distinct,
            (SELECT coalesce(sum(count), 0)::int FROM histograms
              WHERE min_us >= $2 AND max_us < $2 + 1000) AS counted,
            (SELECT coalesce(sum(cardinality(durations)), 0)::int FROM span_durations
              WHERE durations[1] >= $2 AND durations[1] < $2 + 1000) AS durations`,
    [id, trace * 1000],
  );
  return c[0];
}

async function lockWaiters(): Promise<number> {
  const { rows: w } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return w[0]!.n;
}

async function until(what: string, pred: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a retry across midnight', () => {
  it('is stored once while the original, received before midnight, is not yet committed', async () => {
    const trace = 5;
    const locker: PoolClient = await pool.connect();
    const c1 = await pool.connect();
    const c2 = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE histograms IN SHARE MODE');
      const waitingBefore = await lockWaiters();
      // The original: received yesterday, its spans in yesterday's partition, not committed.
      const original = writeSpans(c1, [rows(trace, 1, 11)], yesterday, lateYesterday);
      await until('the original to stall', async () => (await lockWaiters()) > waitingBefore);
      // Its client timed out and sent again (with 5 more spans) after midnight.
      const retry = writeSpans(c2, [rows(trace, 6, 16)], today, lateYesterday);
      await until('the retry to wait', async () => (await lockWaiters()) > waitingBefore + 1);
      await locker.query('COMMIT');
      const [a, b] = await Promise.all([original, retry]);
      expect(a + b, 'spans reported new').toBe(15);
      expect(await counted(trace)).toEqual({ spans: 15, distinct: 15, counted: 15, durations: 15 });
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      locker.release();
      c1.release();
      c2.release();
    }
  });

  it('is stored once when the original’s transaction starts, still dated yesterday, after the retry was stored today', async () => {
    const trace = 6;
    const body = rows(trace, 1, 11);
    // The retry came first and is stored today.
    const c = await pool.connect();
    try {
      expect(await writeSpans(c, [body], today, lateYesterday)).toBe(10);
    } finally {
      c.release();
    }
    // The original's server read its clock just before midnight (or runs behind the database's).
    const late = new GroupCommit(pool, parts, { now: () => lateYesterday });
    expect(await late.write(body, 10, lateYesterday)).toEqual({ inserted: 0, duplicates: 10 });
    expect(await counted(trace)).toEqual({ spans: 10, distinct: 10, counted: 10, durations: 10 });
  });

  it('is stored once, today, when a transaction with the server’s folds is dated yesterday by a clock behind the database’s', async () => {
    const trace = 7;
    // What the server keeps of each span while decoding (span-folds.ts): one series and
    // resource, one minute.
    const folds: SpanBatch = {
      ids: [[1, 1]],
      group: new Int32Array(10),
      minuteMs: Float64Array.from(
        { length: 10 },
        (_, i) => Math.floor((lateYesterday + i + 1) / 60_000) * 60_000,
      ),
      durationUs: Float64Array.from({ length: 10 }, (_, i) => trace * 1000 + i + 1),
    };
    // Sent whole with its COPYs (write-spans.ts): the day check aborts it, and it is written again today.
    const late = new GroupCommit(pool, parts, { now: () => lateYesterday });
    expect(await late.write(rows(trace, 1, 11), 10, lateYesterday, folds)).toEqual({
      inserted: 10,
      duplicates: 0,
    });
    expect(await counted(trace)).toEqual({ spans: 10, distinct: 10, counted: 10, durations: 10 });
    const { rows: days } = await pool.query<{ day: string; n: number }>(
      `SELECT to_char(received_day, 'YYYY-MM-DD') AS day, count(*)::int AS n FROM observations
        WHERE trace_id = $1 GROUP BY 1`,
      [Buffer.alloc(16, trace)],
    );
    expect(days).toEqual([{ day: today, n: 10 }]);
    // Its retry, from the same late server, finds them.
    expect(await late.write(rows(trace, 1, 11), 10, lateYesterday, folds)).toEqual({
      inserted: 0,
      duplicates: 10,
    });
    expect(await counted(trace)).toEqual({ spans: 10, distinct: 10, counted: 10, durations: 10 });
  });
});
