/**
 * Histograms and durations folded across ingest transactions (docs/storage.md
 * "Folded across transactions"). On a realistic load a
 * transaction's spans fall on nearly as many (series, resource, minute)s as
 * there are spans, so writing each transaction's histogram rows, and
 * compacting them two minutes later, was over half of PostgreSQL's work per
 * span, and its durations rows (one per ~3 spans) most of the rest after the
 * raw rows (docs/scaling.md). Under load a transaction instead commits a mark
 * (`fold_marks`): which of the raw rows it wrote are its spans (their received
 * day, received_at and xmin), and the server keeps their histograms and
 * durations in memory; at most `foldMs` later, or as soon as nothing waits
 * behind a transaction (the burst may be over: group-commit.ts answers its
 * exports after this), the folds of all those transactions are written merged,
 * one histogram row per (series, resource, minute) and one durations array per
 * (series, minute), in the transaction that deletes their marks.
 *
 * Exactly once, whatever fails: a fold applies only the entries whose marks
 * its own DELETE returned. A server that dies leaves its marks; each server
 * holds a session advisory lock on its writer id, and any server folds the
 * marked spans of a writer whose lock is free from `observations` and deletes
 * the marks (at start and every `RECOVER_EVERY_MS`). A transaction whose
 * outcome is unknown (the connection failed) is looked for for `UNCERTAIN_MS`.
 *
 * The journal is `fold_marks` (migration 0034). Servers from before it
 * committed the histogram and durations rows themselves, as COPY data, to
 * `fold_journal` (0033), and before that the histograms alone to
 * `histogram_journal` (0032, their durations written with their spans): rows
 * they leave there are still recovered.
 */
import { randomInt } from 'node:crypto';
import { isStatementError, transactionOn, type Pool, type PoolClient } from '../db/pool.ts';
import { copyIn } from './copy-in.ts';
import { histogramJournalRows } from '../observability/metrics.ts';
import { partitionName, utcDay, type Partitions } from '../db/partitions.ts';
import { copyData } from './copy-rows.ts';
import { DURATIONS_COPY_TARGET, FoldSum, HISTOGRAM_COPY_TARGET } from './span-folds.ts';

/** The `observations` partition of a day, checked to be a plain name (it goes into SQL). */
function dayPartition(day: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
  return partitionName('observations', day);
}

/**
 * The statement that commits a transaction's mark, sent in it before its spans' COPY into the
 * `day` partition (write-spans.ts): the mark's received_at and xid are that transaction's, and
 * its first block the partition's size before the COPY appends to it.
 */
export function markStatement(w: JournalWrite, day: string): string {
  return `INSERT INTO fold_marks (writer, seq, received_day, spans, first_block)
    VALUES (${w.writer}, ${w.seq}, '${day}', ${w.folds.spans},
            pg_relation_size('${dayPartition(day)}') / current_setting('block_size')::int)`;
}

/**
 * The journal tables: this version's marks, and the COPY data rows servers before migration
 * 0034 (fold_journal) and 0033 (histogram_journal) wrote.
 */
const JOURNALS = {
  // As text in UTC, whatever the session's DateStyle: a Date would keep only milliseconds.
  fold_marks: `to_char(received_day, 'YYYY-MM-DD') AS day,
    to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS received_at,
    xid::text AS xid, spans, first_block::text AS first_block`,
  fold_journal: 'histograms, durations',
  histogram_journal: 'data AS histograms, NULL::bytea AS durations',
} as const;
type JournalTable = keyof typeof JOURNALS;

/**
 * A marked transaction's spans, from the raw rows it wrote in a day's partition: those of its
 * received_at and xmin, from the mark's first block on unless `whole`. Into a table that lasts
 * the transaction, from which they are folded as FoldSum.rows folds them (onset_bucket is
 * core's bucketIndex).
 */
const markedSpans = (partition: string, fromBlock: number | null) => {
  if (fromBlock !== null && !Number.isSafeInteger(fromBlock))
    throw new Error(`not a block number: ${fromBlock}`);
  // A constant bound, so that the planner can read just those blocks (a TID range scan).
  return `INSERT INTO marked_spans
   SELECT series_id, resource_id, date_trunc('minute', start_time, 'UTC'), duration_us FROM ${partition}
    WHERE received_at = ($1::timestamp AT TIME ZONE 'UTC') AND xmin = $2::xid
      ${fromBlock === null ? '' : `AND ctid >= '(${fromBlock},0)'::tid`}`;
};
/**
 * Blocks before a mark's first block read too: a COPY starts in the page its backend last
 * inserted into (the partition's last when the same connection wrote the transaction before),
 * and another backend's extension can leave free pages just before (512 kB).
 */
const MARK_BLOCK_SLACK = 64;
const MARKED_STAGE = `CREATE TEMP TABLE IF NOT EXISTS marked_spans (
    series_id bigint, resource_id bigint, minute timestamptz, duration_us double precision
  ) ON COMMIT DROP`;
const MARKED_HISTOGRAMS = `WITH b AS (
   SELECT series_id, resource_id, minute, onset_bucket(duration_us) AS i,
          count(*)::int AS c, sum(duration_us) AS s, min(duration_us) AS mn, max(duration_us) AS mx
     FROM marked_spans GROUP BY 1, 2, 3, 4
 )
 INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
 SELECT series_id, resource_id, minute, sum(c), sum(s), min(mn), max(mx),
        array_agg(i ORDER BY i), array_agg(c ORDER BY i)
   FROM b GROUP BY 1, 2, 3`;
/** Received on the day of the transaction that applies them, as a fold's are. */
const MARKED_DURATIONS = `INSERT INTO span_durations (received_day, series_id, minute, durations, sorted)
 SELECT (now() AT TIME ZONE 'UTC')::date, series_id, minute, array_agg(duration_us ORDER BY duration_us), true
   FROM marked_spans GROUP BY 2, 3`;

/**
 * A fold_journal row's durations are COPY rows without their day: they are received on the
 * day of the transaction that applies them (received_day and received_at agree, as SLO counting
 * reads them), through a table of this shape that lasts the transaction.
 */
const JOURNAL_DURATIONS_STAGE = `CREATE TEMP TABLE IF NOT EXISTS journal_durations (
    series_id bigint, minute timestamptz, durations double precision[], sorted boolean
  ) ON COMMIT DROP`;
const JOURNAL_DURATIONS_MOVE = `WITH moved AS (DELETE FROM journal_durations RETURNING *)
  INSERT INTO span_durations (received_day, series_id, minute, durations, sorted)
  SELECT (now() AT TIME ZONE 'UTC')::date, series_id, minute, durations, sorted FROM moved`;
/** The day a fold's durations are received on: its transaction's (their received_at). */
const FOLD_DAY_SQL = `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`;
const DAY_MS = 86_400_000;
/** How often a server looks for rows of writers that died. */
const RECOVER_EVERY_MS = 10_000;
/** How long a transaction of unknown outcome is looked for by the fold. */
const UNCERTAIN_MS = 30_000;
/** This writer's own rows older than this are applied by its recovery (none should be left). */
const OWN_LEFT_S = 60;
/**
 * Journal rows applied per recovery transaction (a mark's spans are read from its partition;
 * an older row can be a few hundred kB): with a savepoint per part of a row, at most 60
 * (PostgreSQL tracks 64 per transaction in memory).
 */
const RECOVER_BATCH = 30;
/**
 * Errors that mean a part of a journal row can never be written, so it is dropped rather than
 * kept: no partition for its rows (retention dropped its minute's), a value out of range. Any
 * other error (a cancel, a full disk, a deadlock) rolls the whole transaction back and the
 * rows stay in the journal for the next fold or recovery.
 */
const isRefusedForGood = (err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === '23514' || code.startsWith('22'));
};
/**
 * Spans held at most, dropped ones included (e.g. while PostgreSQL refuses the fold): ~20
 * bytes each held, and grouping them into rows takes ~150 bytes a span at the worst (every span
 * its own histogram row). Past it, transactions write their own histograms and durations.
 */
const MAX_PENDING_SPANS = 1_000_000;

/** One transaction's mark, and what became of it (write-spans.ts sets `state`). */
export interface JournalWrite {
  writer: number;
  seq: number;
  /** The transaction's spans, which join the fold's once it commits. */
  folds: FoldSum;
  /** none: in no transaction that can commit; sent: outcome unknown; committed. */
  state: 'none' | 'sent' | 'committed';
}

/** A transaction of unknown outcome, looked for in the journal. */
interface Uncertain {
  seq: number;
  settledAt: number;
}

export class FoldJournal {
  /** This process's writer id (the advisory lock's key). */
  readonly writer = randomInt(1, 2 ** 47);
  /**
   * Folds written, journal rows applied by them, rows of dead writers recovered, and marks
   * whose spans were not all in the blocks read first (their whole partition read).
   */
  readonly counts = { folds: 0, applied: 0, recovered: 0, partitionReads: 0 };
  private seq = 0;
  /** The histograms and durations of committed transactions not folded yet, and their journal rows. */
  private sum = new FoldSum();
  private seqs: number[] = [];
  private uncertain: Uncertain[] = [];
  private lock: PoolClient | null = null;
  private releaseLock: () => void = () => {};
  private locking: Promise<void> | null = null;
  private lastLockTry = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private recoverTimer: NodeJS.Timeout | null = null;
  /** The timer's recovery under way, which close() waits for (the pool ends after it). */
  private recovering: Promise<void> | null = null;
  private closed = false;
  /** Folds under way: a burst's last answer waits for them too. */
  private folding = 0;
  private lockWarned = false;

  constructor(
    private readonly pool: Pool,
    /** Durations are written on the applying transaction's day: its partition is made first. */
    private readonly partitions: Partitions,
    /** 0: transactions always write their own histograms and durations (recovery still runs). */
    private readonly foldMs: number,
    private readonly onError: (err: unknown, what: string) => void = () => {},
  ) {}

  /** Take this writer's lock and apply what dead writers left. */
  async start(): Promise<void> {
    await this.acquire();
    await this.recoverOrphans().catch((err) => this.onError(err, 'recovering the journal'));
    this.recoverTimer = setInterval(() => {
      if (this.recovering) return;
      this.recovering = this.recoverOrphans()
        .then(
          () => {},
          (err) => this.onError(err, 'recovering the journal'),
        )
        .finally(() => {
          this.recovering = null;
        });
    }, RECOVER_EVERY_MS);
    this.recoverTimer.unref();
  }

  /** Whether a transaction may leave its histograms and durations to the fold now. */
  get ready(): boolean {
    if (this.foldMs <= 0 || this.closed || this.sum.held > MAX_PENDING_SPANS) return false;
    if (!this.lock && Date.now() - this.lastLockTry > 1000) void this.acquire();
    return this.lock !== null;
  }

  /** Whether folds wait to be written. */
  get hasPending(): boolean {
    return this.seqs.length > 0 || this.uncertain.length > 0 || this.folding > 0;
  }

  /** A mark for a transaction's spans (markStatement writes it). */
  entry(folds: FoldSum): JournalWrite {
    return { writer: this.writer, seq: ++this.seq, folds, state: 'none' };
  }

  /**
   * The transaction of `w` is over. Committed: its histograms join the next fold. Of unknown
   * outcome: the next folds look for its journal row and apply that.
   */
  settle(w: JournalWrite): void {
    if (w.state === 'none') return;
    if (w.state === 'committed') {
      this.sum.addSum(w.folds);
      this.seqs.push(w.seq);
    } else this.uncertain.push({ seq: w.seq, settledAt: Date.now() });
    this.schedule();
  }

  /** Write every settled entry's histograms now; resolves once that fold is over (ok or not). */
  flush(): Promise<void> {
    const run = this.chain.then(() => this.foldOnce());
    this.chain = run.catch(() => {});
    return run;
  }

  /** Fold what is pending, then let go of the lock (its rows stay for whoever starts next). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.recoverTimer) clearInterval(this.recoverTimer);
    await this.recovering;
    await this.flush().catch((err) => this.onError(err, 'folding at shutdown'));
    await this.locking;
    this.releaseLock();
  }

  private schedule(): void {
    if (this.timer || (!this.seqs.length && !this.uncertain.length)) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush().catch(() => {});
    }, this.foldMs);
    this.timer.unref();
  }

  private async foldOnce(): Promise<void> {
    const { sum, seqs, uncertain } = this;
    if (!seqs.length && !uncertain.length) return;
    this.sum = new FoldSum();
    this.seqs = [];
    this.uncertain = [];
    this.folding++;
    try {
      await this.fold(sum, seqs, uncertain);
    } finally {
      this.folding--;
    }
  }

  private async fold(sum: FoldSum, seqs: number[], uncertain: Uncertain[]): Promise<void> {
    let client: PoolClient | null = null;
    let found: Set<number>;
    try {
      await this.ensureDurationsDays();
      client = await this.pool.connect();
      found = await transactionOn(client, async (c) => {
        const out = new Set<number>();
        if (seqs.length) {
          const { rows } = await c.query<{ seq: string }>(
            'SELECT seq FROM fold_marks WHERE writer = $1 AND seq = ANY($2::int8[]) FOR UPDATE',
            [this.writer, seqs],
          );
          if (rows.length === seqs.length) {
            await c.query('DELETE FROM fold_marks WHERE writer = $1 AND seq = ANY($2::int8[])', [
              this.writer,
              seqs,
            ]);
            const { rows: today } = await c.query<{ day: string }>(FOLD_DAY_SQL);
            const { histograms, durations } = sum.rows(today[0]!.day);
            await copyIn(c, HISTOGRAM_COPY_TARGET, copyData([histograms]));
            await copyIn(c, DURATIONS_COPY_TARGET, copyData([durations]));
            for (const q of seqs) out.add(q);
          } else {
            // Some were applied by a server that took this writer for dead (its lock was
            // lost): the rest from their marks, the sum in memory set aside.
            const left = rows.map((r) => Number(r.seq));
            for (const q of (await this.applyRows(c, { seqs: left })).applied) out.add(q);
          }
        }
        if (uncertain.length)
          for (const q of (await this.applyRows(c, { seqs: uncertain.map((u) => u.seq) })).applied)
            out.add(q);
        return out;
      });
      client.release();
    } catch (err) {
      client?.release(true);
      if (isStatementError(err)) {
        // A row PostgreSQL refuses (its minute's partition dropped meanwhile) would fail every
        // fold: the sum is set aside and each row applied from the journal on its own.
        const now = Date.now();
        this.uncertain.push(...uncertain, ...seqs.map((seq) => ({ seq, settledAt: now })));
      } else {
        // Whether it committed or not, the next fold's look at the journal tells: all again.
        this.sum.addSum(sum);
        this.seqs.push(...seqs);
        this.uncertain.push(...uncertain);
      }
      if (!this.closed) this.schedule();
      this.onError(err, 'folding histograms and durations');
      throw err;
    }
    this.counts.folds++;
    this.counts.applied += found.size;
    histogramJournalRows.inc({ how: 'folded' }, found.size);
    // Not found: a transaction that did not commit, or one that has not yet; looked for a while.
    const now = Date.now();
    this.uncertain.push(
      ...uncertain.filter((u) => !found.has(u.seq) && now - u.settledAt < UNCERTAIN_MS),
    );
    if (!this.closed) this.schedule();
  }

  /**
   * The partitions a fold's or a recovery's durations may go to: today's and tomorrow's (the
   * transaction's clock may have passed midnight). Known ones cost nothing (db/partitions.ts).
   */
  private async ensureDurationsDays(): Promise<void> {
    const now = Date.now();
    await this.partitions.ensure('span_durations', [utcDay(now), utcDay(now + DAY_MS)]);
  }

  /** This writer's session lock on a connection of its own, kept while it lasts. */
  private acquire(): Promise<void> {
    if (this.lock || this.closed) return Promise.resolve();
    if (this.locking) return this.locking;
    this.lastLockTry = Date.now();
    this.locking = (async () => {
      const c = await this.pool.connect();
      let released = false;
      const release = () => {
        if (this.lock === c) this.lock = null;
        if (!released) c.release(true);
        released = true;
      };
      // The connection ended (its lock with it): back to the pool as broken; taken again later.
      c.on('error', release);
      c.on('end', release);
      try {
        await c.query('SELECT pg_advisory_lock($1::int8)', [this.writer]);
      } catch (err) {
        release();
        throw err;
      }
      if (this.closed) release();
      else {
        this.lock = c;
        this.releaseLock = release;
      }
      this.lockWarned = false;
    })()
      .catch((err) => {
        // Once per outage: it is tried again every second meanwhile.
        if (!this.lockWarned) this.onError(err, 'taking the histogram journal lock');
        this.lockWarned = true;
      })
      .finally(() => {
        this.locking = null;
      });
    return this.locking;
  }

  /**
   * Apply and delete the journal rows of writers whose lock is free (they died), and this
   * writer's own rows that no fold took (OWN_LEFT_S old: a commit it never learned of).
   */
  async recoverOrphans(): Promise<number> {
    const { rows: writers } = await this.pool.query<{ writer: string; journal: JournalTable }>(
      `SELECT DISTINCT writer, 'fold_marks' AS journal FROM fold_marks WHERE writer <> $1
       UNION ALL
       SELECT DISTINCT writer, 'fold_journal' FROM fold_journal WHERE writer <> $1
       UNION ALL
       SELECT DISTINCT writer, 'histogram_journal' FROM histogram_journal WHERE writer <> $1`,
      [this.writer],
    );
    let recovered = 0;
    await this.ensureDurationsDays();
    const batches = async (journal: JournalTable, writer: number, own: boolean) => {
      for (;;) {
        const client = await this.pool.connect();
        let taken: { rows: number; applied: number[] };
        try {
          taken = await transactionOn(client, async (c) => {
            if (!own) {
              const { rows } = await c.query<{ free: boolean }>(
                'SELECT pg_try_advisory_xact_lock($1::int8) AS free',
                [writer],
              );
              if (!rows[0]!.free) return { rows: 0, applied: [] };
            }
            return this.applyRows(c, {
              journal,
              writer,
              olderThanS: own ? OWN_LEFT_S : undefined,
            });
          });
          client.release();
        } catch (err) {
          client.release(true);
          throw err;
        }
        recovered += taken.applied.length;
        if (taken.rows < RECOVER_BATCH) return;
      }
    };
    for (const { writer, journal } of writers) await batches(journal, Number(writer), false);
    await batches('fold_marks', this.writer, true);
    this.counts.recovered += recovered;
    if (recovered) histogramJournalRows.inc({ how: 'recovered' }, recovered);
    return recovered;
  }

  /**
   * Delete journal rows of a writer (this one unless named: those of `seqs`, or up to
   * RECOVER_BATCH, `olderThanS` old if given) and apply what they stand for: a mark's spans
   * folded from `observations`, an older server's row its COPY data. Rows a fold holds are
   * skipped. A part of a row PostgreSQL refuses for good (its histograms, when their minute's
   * partition is gone: isRefusedForGood) is dropped with a warning, so it can hold back neither
   * the row's other part nor other rows; any other error is thrown (nothing is deleted).
   * Durations are received now; a row of histogram_journal has none (its server wrote them
   * with its spans). Returns how many rows were taken, and the seqs of those applied whole.
   */
  private async applyRows(
    c: PoolClient,
    which: { journal?: JournalTable; writer?: number; seqs?: number[]; olderThanS?: number },
  ): Promise<{ rows: number; applied: number[] }> {
    if (which.seqs && !which.seqs.length) return { rows: 0, applied: [] };
    const journal = which.journal ?? 'fold_marks';
    const writer = which.writer ?? this.writer;
    const { rows } = await c.query<{
      seq: string;
      day?: string;
      received_at?: string;
      xid?: string;
      spans?: number;
      first_block?: string;
      histograms?: Buffer;
      durations?: Buffer | null;
    }>(
      `DELETE FROM ${journal} WHERE writer = $1 AND seq IN (
         SELECT seq FROM ${journal} WHERE writer = $1
            AND ($2::int8[] IS NULL OR seq = ANY($2::int8[]))
            AND ($3::int IS NULL OR written_at < now() - make_interval(secs => $3::int))
          ORDER BY seq ${which.seqs ? '' : `LIMIT ${RECOVER_BATCH}`} FOR UPDATE SKIP LOCKED)
       RETURNING seq, ${JOURNALS[journal]}`,
      [writer, which.seqs ?? null, which.olderThanS ?? null],
    );
    const applied: number[] = [];
    if (rows.some((r) => r.durations)) await c.query(JOURNAL_DURATIONS_STAGE);
    for (const r of rows) {
      const row = `${journal} row ${writer}/${r.seq}`;
      let whole: boolean;
      if (journal === 'fold_marks') {
        const spans = await this.markedSpans(c, {
          day: r.day!,
          receivedAt: r.received_at!,
          xid: r.xid!,
          firstBlock: r.first_block!,
          spans: r.spans!,
        });
        if (spans !== r.spans)
          // Rows gone (retention dropped their day, a restore gave them new xmins): what is left
          // is counted, and said.
          this.onError(
            new Error(`found ${spans} of its ${r.spans} spans`),
            `the spans of ${row}, partly gone`,
          );
        whole = await this.applyPart(c, `the histograms of ${row}`, () =>
          c.query(MARKED_HISTOGRAMS),
        );
        whole =
          (await this.applyPart(c, `the durations of ${row}`, () => c.query(MARKED_DURATIONS))) &&
          whole;
      } else {
        const histograms = r.histograms!;
        whole = await this.applyPart(c, `the histograms of ${row}`, () =>
          copyIn(c, HISTOGRAM_COPY_TARGET, histograms),
        );
        if (r.durations) {
          const durations = r.durations;
          whole =
            (await this.applyPart(c, `the durations of ${row}`, async () => {
              await copyIn(
                c,
                'journal_durations (series_id, minute, durations, sorted)',
                durations,
              );
              await c.query(JOURNAL_DURATIONS_MOVE);
            })) && whole;
        }
      }
      if (whole) applied.push(Number(r.seq));
    }
    return { rows: rows.length, applied };
  }

  /**
   * A mark's spans into marked_spans, read from its first block on (the rows its COPY appended),
   * or from the whole partition when that finds fewer than the mark counts (a COPY may also fill
   * free space in earlier blocks). Returns how many were found; none if the partition is gone.
   */
  private async markedSpans(
    c: PoolClient,
    mark: { day: string; receivedAt: string; xid: string; firstBlock: string; spans: number },
  ): Promise<number> {
    const partition = dayPartition(mark.day);
    await c.query(MARKED_STAGE);
    await c.query('TRUNCATE marked_spans');
    const { rows } = await c.query<{ exists: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS exists',
      [partition],
    );
    if (!rows[0]!.exists) return 0;
    // The BRIN on received_at would be a bitmap scan of every range not yet summarized, which
    // is where recent rows are: the TID range instead.
    await c.query('SET LOCAL enable_bitmapscan = off');
    const from = Math.max(0, Number(mark.firstBlock) - MARK_BLOCK_SLACK);
    const tail = await c.query(markedSpans(partition, from), [mark.receivedAt, mark.xid]);
    await c.query('RESET enable_bitmapscan');
    if (tail.rowCount === mark.spans) return mark.spans;
    this.counts.partitionReads++;
    await c.query('TRUNCATE marked_spans');
    const all = await c.query(markedSpans(partition, null), [mark.receivedAt, mark.xid]);
    return all.rowCount ?? 0;
  }

  /** One part of a journal row, under a savepoint: false, with a warning, when PostgreSQL refuses it for good. */
  private async applyPart(
    c: PoolClient,
    what: string,
    apply: () => Promise<unknown>,
  ): Promise<boolean> {
    await c.query('SAVEPOINT journal_part');
    try {
      await apply();
      await c.query('RELEASE SAVEPOINT journal_part');
      return true;
    } catch (err) {
      if (!isRefusedForGood(err)) throw err;
      await c.query('ROLLBACK TO SAVEPOINT journal_part');
      this.onError(err, `${what} refused; dropped`);
      return false;
    }
  }
}
