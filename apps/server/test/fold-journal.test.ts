/**
 * Histograms and durations folded across ingest transactions
 * (otlp/fold-journal.ts) on a real PostgreSQL: under load transactions
 * leave their histograms and durations to one merged write, every span is
 * counted (histograms and exact SLO durations) by the time the burst's last
 * export is answered, and a writer that loses its lock (as a crashed server
 * does) has its marked spans folded by another server exactly once, from the
 * raw rows, even though it still holds them in memory. Rows older servers left
 * in the earlier journals are applied once too. Durations are always received
 * on the day of their received_at, which SLO counting reads them by.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { Partitions, utcDay } from '../src/db/partitions.ts';
import { GroupCommit } from '../src/otlp/group-commit.ts';
import { CopyRows, copyData } from '../src/otlp/copy-rows.ts';
import { FoldJournal } from '../src/otlp/fold-journal.ts';
import { FoldSum, type SpanBatch } from '../src/otlp/span-folds.ts';
import { writeSpans } from '../src/otlp/write-spans.ts';

let pool: Pool;
let partitions: Partitions;
const MINUTE = Math.floor(Date.now() / 60_000) * 60_000 - 60_000;

beforeAll(async () => {
  const url = await createTestDatabase('onset_fold_journal');
  await migrate(url);
  pool = createPool(url);
  partitions = new Partitions(pool);
  await partitions.ensure('histograms', [utcDay(MINUTE)]);
  await partitions.ensure('observations', [utcDay(Date.now())]);
  await partitions.ensure('span_durations', [utcDay(Date.now())]);
});
afterAll(async () => {
  await pool?.end();
});

/**
 * `n` spans of series 1 on resource 1 in one minute (MINUTE unless given), trace ids tagged with
 * `tag`, and what their histograms and durations are made of. Their durations differ from
 * request to request and are not in order, so arrays must be sorted.
 */
function request(
  tag: number,
  n: number,
  minuteMs = MINUTE,
  durationsOf = tag,
): { rows: Buffer; folds: SpanBatch } {
  const rows = new CopyRows(64);
  const durations = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const trace = Buffer.alloc(16);
    trace.writeUInt32BE(tag, 0);
    trace.writeUInt32BE(i + 1, 12);
    const span = Buffer.alloc(8);
    span.writeUInt32BE(i + 1, 4);
    durations[i] = 1000 + ((durationsOf * 7919 + i * 104729) % 5000);
    rows.reserve(200);
    rows.row(10);
    rows.bytes(trace);
    rows.bytes(span);
    rows.null();
    rows.int8(1);
    rows.int8(1);
    rows.timestampMs(minuteMs + i);
    rows.float8(durations[i]!);
    rows.int2(2);
    rows.null();
    rows.reserve(5);
    rows.bool(false);
  }
  const folds: SpanBatch = {
    ids: [[1, 1]],
    group: new Int32Array(n),
    minuteMs: new Float64Array(n).fill(minuteMs),
    durationUs: durations,
  };
  return { rows: Buffer.from(rows.view()), folds };
}

/**
 * The earliest start the writes below claim for their spans: late enough that no span could have
 * been received yesterday, so the fold's path is taken even in the first hour of a UTC day (the
 * look at yesterday's partition is ingest-midnight-retry.test.ts's).
 */
const LATE = Number.POSITIVE_INFINITY;

/** A minute whose histogram partition is gone (retention dropped it). */
const DROPPED_MINUTE = Date.UTC(2001, 0, 1);

interface Counted {
  /** Spans in histograms, histogram rows, journal rows. */
  spans: number;
  rows: number;
  journal: number;
  /** Durations stored (exact SLO counts) and their arrays. */
  durations: number;
  durationRows: number;
}

async function counted(): Promise<Counted> {
  const { rows } = await pool.query<Counted & { misdated: number; unsorted: number }>(
    `SELECT (SELECT coalesce(sum(count), 0)::int FROM histograms) AS spans,
            (SELECT count(*)::int FROM histograms) AS rows,
            (SELECT count(*)::int FROM fold_marks) + (SELECT count(*)::int FROM fold_journal)
              + (SELECT count(*)::int FROM histogram_journal) AS journal,
            (SELECT coalesce(sum(cardinality(durations)), 0)::int FROM span_durations) AS durations,
            (SELECT count(*)::int FROM span_durations) AS "durationRows",
            (SELECT count(*)::int FROM span_durations
              WHERE received_day <> (received_at AT TIME ZONE 'UTC')::date) AS misdated,
            (SELECT count(*)::int FROM span_durations
              WHERE NOT sorted OR durations <> (SELECT array_agg(d ORDER BY d) FROM unnest(durations) d))
              AS unsorted`,
  );
  const { misdated, unsorted, ...rest } = rows[0]!;
  // SLO counting finds durations by received_day and received_at, and binary-searches them.
  expect({ misdated, unsorted }).toEqual({ misdated: 0, unsorted: 0 });
  return rest;
}

async function burst(writer: GroupCommit, from: number, exports: number, spans: number) {
  return Promise.all(
    Array.from({ length: exports }, (_, k) => {
      const r = request(from + k, spans);
      return writer.write(r.rows, spans, LATE, r.folds);
    }),
  );
}

const EMPTY =
  'TRUNCATE observations, histograms, fold_marks, fold_journal, histogram_journal, span_durations';

describe('histograms and durations folded across transactions', () => {
  it('under load, transactions share one histogram and durations write, and every span is counted at the last answer', async () => {
    await pool.query(EMPTY);
    const journal = new FoldJournal(pool, partitions, 60_000);
    await journal.start();
    // At most two exports a transaction: the first goes out alone (nothing behind it yet), the
    // other nineteen queue behind it and go out two by two, the last alone.
    const writer = new GroupCommit(pool, partitions, { writers: 1, maxRows: 100, journal });
    const answers = await burst(writer, 1000, 20, 50);
    expect(answers.every((a) => a.inserted === 50)).toBe(true);
    expect(writer.counts.transactions).toBe(11);
    const after = await counted();
    // The burst's last transaction found nothing behind it and wrote the fold before answering.
    expect(after.spans).toBe(1000);
    expect(after.durations).toBe(1000);
    expect(after.journal).toBe(0);
    // The two lone transactions wrote their own rows, the nine in between one merged row
    // (without the fold: 11 rows of each).
    expect(after.rows).toBe(3);
    expect(after.durationRows).toBe(3);
    expect(journal.counts.applied).toBe(9);
    await journal.close();
  });

  it('a lone export writes its own histograms, as before', async () => {
    await pool.query(EMPTY);
    const journal = new FoldJournal(pool, partitions, 60_000);
    await journal.start();
    const writer = new GroupCommit(pool, partitions, { writers: 1, journal });
    const r = request(3000, 30);
    await writer.write(r.rows, 30, Date.now(), r.folds);
    expect(await counted()).toEqual({
      spans: 30,
      rows: 1,
      journal: 0,
      durations: 30,
      durationRows: 1,
    });
    expect(journal.counts.folds).toBe(0);
    await journal.close();
  });

  it("a writer's rows are applied once, by another server, when its lock is lost", async () => {
    await pool.query(EMPTY);
    const dying = new FoldJournal(pool, partitions, 60_000);
    const other = new FoldJournal(pool, partitions, 60_000);
    await dying.start();
    await other.start();
    // Thirty exports: the first and the last alone (their own histograms), fourteen
    // transactions of two in between, whose fold is never written.
    const writer = new GroupCommit(pool, partitions, { writers: 1, maxRows: 100, journal: dying });
    const flush = dying.flush.bind(dying);
    dying.flush = async () => {}; // a server that dies before it folds
    await burst(writer, 5000, 30, 50);
    const left = await counted();
    expect(left).toMatchObject({ spans: 100, durations: 100, journal: 14 });
    // Alive (its lock held): nobody else touches its rows.
    expect(await other.recoverOrphans()).toBe(0);

    // Its lock's connection ends, as when its process is killed.
    const { rows } = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
          AND classid::int8 * 4294967296 + objid::int8 = $1`,
      [dying.writer],
    );
    expect(rows).toHaveLength(1);
    await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await new Promise((r) => setTimeout(r, 200));
    expect(await other.recoverOrphans()).toBe(left.journal);
    expect(await counted()).toMatchObject({ spans: 1500, durations: 1500, journal: 0 });

    // It still holds those transactions' folds: writing them now adds nothing.
    dying.flush = flush;
    await dying.flush();
    expect(await counted()).toMatchObject({ spans: 1500, durations: 1500 });
    await dying.close();
    await other.close();
  });

  it("a writer's own row that no fold took is applied by its recovery; a part PostgreSQL refuses is dropped, not the rest", async () => {
    await pool.query(EMPTY);
    const warnings: string[] = [];
    const journal = new FoldJournal(pool, partitions, 60_000, (_err, what) => warnings.push(what));
    await journal.start();
    // A commit the server never learned of (its connection failed at COMMIT): marked, in no
    // fold. And one whose minute's histogram partition is gone (retention dropped it
    // meanwhile); its durations go to the day they are received on, which is there.
    const c = await pool.connect();
    try {
      for (const r of [request(7000, 40), request(7001, 5, DROPPED_MINUTE)]) {
        const folds = FoldSum.of([r.folds]);
        const mark = journal.entry(folds);
        const day = utcDay(Date.now());
        expect(await writeSpans(c, [r.rows], day, LATE, folds, { journal: mark })).toBe(
          r.folds.group.length,
        );
        expect(mark.state).toBe('committed');
      }
    } finally {
      c.release();
    }
    expect(await counted()).toMatchObject({ spans: 0, durations: 0, journal: 2 });
    // Young rows are left alone: a fold may still take them.
    expect(await journal.recoverOrphans()).toBe(0);
    await pool.query(`UPDATE fold_marks SET written_at = now() - interval '2 minutes'`);
    // One applied whole; the other's histograms dropped with a warning, its durations kept.
    expect(await journal.recoverOrphans()).toBe(1);
    expect(await counted()).toEqual({
      spans: 40,
      rows: 1,
      journal: 0,
      durations: 45,
      durationRows: 2,
    });
    expect(warnings).toEqual([
      expect.stringMatching(/^the histograms of fold_marks row \d+\/2 refused; dropped$/),
    ]);
    await journal.close();
  });

  it('a fold PostgreSQL refuses is applied row by row: only the refused part is dropped, the rest counted once', async () => {
    await pool.query(EMPTY);
    const warnings: string[] = [];
    const journal = new FoldJournal(pool, partitions, 60_000, (_err, what) => warnings.push(what));
    await journal.start();
    const writer = new GroupCommit(pool, partitions, { writers: 1, maxRows: 100, journal });
    // Export 5 (in the third transaction, with export 6) has a minute whose histogram
    // partition is gone, so the merged fold's histograms COPY fails as a whole.
    await Promise.all(
      Array.from({ length: 20 }, (_, k) => {
        const r = request(9000 + k, 50, k === 5 ? DROPPED_MINUTE : MINUTE);
        return writer.write(r.rows, 50, LATE, r.folds);
      }),
    );
    expect(warnings).toEqual(['folding histograms and durations']);
    expect(await counted()).toMatchObject({ journal: 9 });
    // The next fold applies each row on its own: the third transaction's histograms are
    // dropped (a row's histograms go in whole or not at all), its durations kept.
    await journal.flush();
    expect(await counted()).toMatchObject({ spans: 900, durations: 1000, journal: 0 });
    expect(warnings.slice(1)).toEqual([
      expect.stringMatching(/^the histograms of fold_marks row \d+\/3 refused; dropped$/),
    ]);
    await journal.close();
  });

  it('rows a server from before migration 0033 left in histogram_journal are applied once, histograms only', async () => {
    await pool.query(EMPTY);
    const journal = new FoldJournal(pool, partitions, 60_000);
    await journal.start();
    // Two old servers' rows (their durations went out with their spans): one still alive
    // (its lock held), one dead.
    const [alive, dead] = [2 ** 40 + 1, 2 ** 40 + 2];
    const lock = await pool.connect();
    await lock.query('SELECT pg_advisory_lock($1::int8)', [alive]);
    for (const [writer, tag] of [
      [alive, 8000],
      [dead, 8001],
    ] as const)
      await pool.query('INSERT INTO histogram_journal (writer, seq, data) VALUES ($1, 1, $2)', [
        writer,
        copyData([FoldSum.of([request(tag, 10).folds]).rows(null).histograms]),
      ]);
    expect(await journal.recoverOrphans()).toBe(1);
    expect(await counted()).toEqual({
      spans: 10,
      rows: 1,
      journal: 1,
      durations: 0,
      durationRows: 0,
    });
    lock.release(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(await journal.recoverOrphans()).toBe(1);
    expect(await counted()).toMatchObject({ spans: 20, journal: 0, durations: 0 });
    await journal.close();
  });

  it('rows a server from before migration 0034 left in fold_journal are applied once, histograms and durations', async () => {
    await pool.query(EMPTY);
    const journal = new FoldJournal(pool, partitions, 60_000);
    await journal.start();
    // A dead server's row: its transaction's histogram and durations rows as COPY data.
    const { histograms, durations } = FoldSum.of([request(8100, 12).folds]).rows(null);
    await pool.query(
      'INSERT INTO fold_journal (writer, seq, histograms, durations) VALUES ($1, 1, $2, $3)',
      [2 ** 40 + 3, copyData([histograms]), copyData([durations])],
    );
    expect(await journal.recoverOrphans()).toBe(1);
    expect(await counted()).toEqual({
      spans: 12,
      rows: 1,
      journal: 0,
      durations: 12,
      durationRows: 1,
    });
    expect(await journal.recoverOrphans()).toBe(0);
    await journal.close();
  });

  it("a mark's spans are folded from the raw rows as the fold in memory folds them, from anywhere in the partition; rows gone are said", async () => {
    const warnings: string[] = [];
    const journal = new FoldJournal(pool, partitions, 60_000, (_err, what) => warnings.push(what));
    await journal.start();
    const day = utcDay(Date.now());
    /**
     * Write `r` in a transaction that leaves a mark, and return what is stored after `apply`.
     * Unless `held`, the server never learns of the commit (nothing held in memory: only the
     * mark).
     */
    const stored = async (
      r: { rows: Buffer; folds: SpanBatch },
      apply: () => Promise<void>,
      held = false,
    ) => {
      await pool.query(EMPTY);
      const c = await pool.connect();
      try {
        const folds = FoldSum.of([r.folds]);
        const mark = journal.entry(folds);
        await writeSpans(c, [r.rows], day, LATE, folds, { journal: mark });
        // Committed: held for the next fold, as group-commit.ts settles it.
        if (held) journal.settle(mark);
      } finally {
        c.release();
      }
      await apply();
      const { rows } = await pool.query(
        `SELECT json_build_object('h', (SELECT json_agg(h ORDER BY minute) FROM (
                  SELECT minute, count, round(sum_us) AS sum, min_us, max_us, idx, cnt FROM histograms) h),
                'd', (SELECT json_agg(durations) FROM span_durations)) AS v`,
      );
      return rows[0]!.v;
    };
    const spans = () => request(7100, 300, MINUTE, 1);
    // The fold in memory, then the same spans recovered from their mark: the same rows.
    const folded = await stored(spans(), () => journal.flush(), true);
    expect(folded.h[0].count).toBe(300);
    const recover = async () => {
      await pool.query(`UPDATE fold_marks SET written_at = now() - interval '2 minutes'`);
      expect(await journal.recoverOrphans()).toBe(1);
    };
    expect(await stored(spans(), recover)).toEqual(folded);
    expect(journal.counts.partitionReads).toBe(0);
    // A mark whose first block is past its rows (they went to free space earlier on): found by
    // reading the whole partition.
    expect(
      await stored(spans(), async () => {
        await pool.query('UPDATE fold_marks SET first_block = first_block + 1000');
        await recover();
      }),
    ).toEqual(folded);
    expect(journal.counts.partitionReads).toBe(1);
    expect(warnings).toEqual([]);
    // Rows gone before the mark was applied: nothing counted, and a warning.
    const gone = await stored(spans(), async () => {
      await pool.query('DELETE FROM observations');
      await recover();
    });
    expect(gone).toEqual({ h: null, d: null });
    expect(warnings).toEqual([
      expect.stringMatching(/^the spans of fold_marks row \d+\/\d+, partly gone$/),
    ]);
    expect((await counted()).journal).toBe(0);
    await journal.close();
  });

  it('a mark written after another transaction on the same connection is found in the blocks from its own on, not by reading the whole partition', async () => {
    await pool.query(EMPTY);
    const journal = new FoldJournal(pool, partitions, 60_000);
    await journal.start();
    const day = utcDay(Date.now());
    const c = await pool.connect();
    try {
      // ~100 blocks of raw rows, folded in memory; then a transaction whose COPY starts in the
      // last of them (its backend's insertion target), and whose commit the server never learns of.
      const first = request(7200, 8000);
      const firstSum = FoldSum.of([first.folds]);
      const held = journal.entry(firstSum);
      await writeSpans(c, [first.rows], day, LATE, firstSum, { journal: held });
      journal.settle(held);
      await journal.flush();
      const second = request(7201, 300);
      const secondSum = FoldSum.of([second.folds]);
      await writeSpans(c, [second.rows], day, LATE, secondSum, {
        journal: journal.entry(secondSum),
      });
    } finally {
      c.release();
    }
    const { rows } = await pool.query<{ first_block: string; min_block: string }>(
      `SELECT m.first_block, (SELECT min((ctid::text::point)[0])::int8 FROM observations
                               WHERE received_at = m.received_at AND xmin = m.xid) AS min_block
         FROM fold_marks m`,
    );
    // The case the slack is for: some of its rows sit before the block its mark names.
    expect(Number(rows[0]!.min_block)).toBeLessThan(Number(rows[0]!.first_block));
    expect(Number(rows[0]!.first_block)).toBeGreaterThan(64);
    await pool.query(`UPDATE fold_marks SET written_at = now() - interval '2 minutes'`);
    expect(await journal.recoverOrphans()).toBe(1);
    expect(await counted()).toMatchObject({ spans: 8300, durations: 8300, journal: 0 });
    expect(journal.counts.partitionReads).toBe(0);
    await journal.close();
  });
});
