/**
 * Group commit on a real PostgreSQL: concurrent requests share a transaction,
 * each is answered only once its rows are committed, a retry inside one group
 * is stored once, and a value PostgreSQL refuses fails only its own request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { Partitions, utcDay } from '../src/db/partitions.ts';
import { GroupCommit } from '../src/otlp/group-commit.ts';
import { CopyRows } from '../src/otlp/copy-rows.ts';

let pool: Pool;
let partitions: Partitions;

beforeAll(async () => {
  const url = await createTestDatabase('onset_group_commit');
  await migrate(url);
  pool = createPool(url);
  partitions = new Partitions(pool);
  await partitions.ensure('histograms', [utcDay(Date.now())]);
});
afterAll(async () => {
  await pool?.end();
});

/** `n` server spans of one request, trace ids tagged with `tag`; optionally the last carries unparsable JSON. */
function request(tag: number, n: number, badAttrs = false): Buffer {
  const rows = new CopyRows(64);
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const trace = Buffer.alloc(16);
    trace.writeUInt32BE(tag, 0);
    trace.writeUInt32BE(i + 1, 12);
    const span = Buffer.alloc(8);
    span.writeUInt32BE(i + 1, 4);
    rows.reserve(200);
    rows.row(10);
    rows.bytes(trace);
    rows.bytes(span);
    rows.null();
    rows.int8(1);
    rows.int8(1);
    rows.timestampMs(now - i);
    rows.float8(1000 + i);
    rows.int2(2);
    if (badAttrs && i === n - 1) rows.jsonb('{"http.route": ');
    else rows.jsonb(`{"i":${i}}`);
    rows.reserve(5);
    rows.bool(true); // an exemplar: stored with its attributes
  }
  return Buffer.from(rows.view());
}

async function stored(tag: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM observations WHERE substring(trace_id FROM 1 FOR 4) = $1`,
    [Buffer.from([tag >>> 24, (tag >>> 16) & 255, (tag >>> 8) & 255, tag & 255])],
  );
  return rows[0]!.n;
}

describe('group commit', () => {
  it('concurrent requests share transactions; each is answered after its rows are committed', async () => {
    const writer = new GroupCommit(pool, partitions, { writers: 1 });
    const seenAtAnswer = await Promise.all(
      Array.from({ length: 20 }, (_, k) =>
        writer.write(request(100 + k, 50), 50).then(async (w) => {
          expect(w).toEqual({ inserted: 50, duplicates: 0 });
          return stored(100 + k); // another connection: only committed rows are visible
        }),
      ),
    );
    expect(seenAtAnswer).toEqual(Array(20).fill(50));
    expect(writer.counts.requests).toBe(20);
    // The first request went out alone; the 19 that queued behind it shared the next transaction.
    expect(writer.counts.transactions).toBe(2);
    const { rows } = await pool.query<{ n: number }>(
      `SELECT sum(h.count)::int AS n FROM histograms h`,
    );
    expect(rows[0]!.n).toBe(1000);
  });

  it('a retry queued in the same transaction as the original is stored and counted once', async () => {
    const writer = new GroupCommit(pool, partitions, { writers: 1 });
    const body = request(200, 30);
    const [busy, first, retry] = await Promise.all([
      writer.write(request(201, 10), 10),
      writer.write(body, 30),
      writer.write(body, 30),
    ]);
    expect(busy).toEqual({ inserted: 10, duplicates: 0 });
    expect(first.inserted + retry.inserted).toBe(30);
    expect(first.duplicates + retry.duplicates).toBe(30);
    expect(await stored(200)).toBe(30);
    expect(writer.counts.transactions).toBe(2);
  });

  it('a value PostgreSQL refuses fails only the request carrying it, not the others in its group', async () => {
    const writer = new GroupCommit(pool, partitions, { writers: 1 });
    const results = await Promise.allSettled([
      writer.write(request(300, 5), 5), // holds the writer, so the next three form one group
      writer.write(request(301, 20), 20),
      writer.write(request(302, 20, true), 20),
      writer.write(request(303, 20), 20),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(((results[2] as PromiseRejectedResult).reason as { code?: string }).code).toBe('22P02');
    expect([await stored(301), await stored(302), await stored(303)]).toEqual([20, 0, 20]);
  });
});
