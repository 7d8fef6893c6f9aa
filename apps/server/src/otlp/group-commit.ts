/**
 * Group commit: span rows of concurrent requests written in one transaction.
 * A request's rows wait only while earlier transactions hold every writer
 * slot; when a slot frees, everything waiting goes out together (one COPY,
 * one fold statement, one COMMIT and its WAL flush for all of them). One slot
 * by default: on the realistic load two transactions at once cost PostgreSQL
 * more per span than one twice the size (they share hot index pages and the
 * cores the server needs; fewer, larger groups also fold more spans together), and
 * they did not answer sooner (docs/scaling.md). Each
 * request is answered after the commit that holds its rows, and a failed
 * transaction fails exactly the requests in it.
 */
import { utcDay, type Partitions } from '../db/partitions.ts';
import { isDatabaseUnavailable, type Pool } from '../db/pool.ts';
import { writeSpans } from './write-spans.ts';
import { DayMoved } from './received-day.ts';
import { FoldSum, type SpanBatch } from './span-folds.ts';
import type { FoldJournal, JournalWrite } from './fold-journal.ts';

export interface GroupCommitOptions {
  /** Transactions in flight at once (PostgreSQL works on each with one core); default 1. */
  writers?: number;
  /** Most spans in one transaction; the rest waits for the next. */
  maxRows?: number;
  /** This server's clock (tests: one that runs behind the database's). */
  now?: () => number;
  /** Under load, histograms are folded across transactions through it (fold-journal.ts). */
  journal?: FoldJournal;
}

/** What one request's rows came to. */
export interface Written {
  inserted: number;
  duplicates: number;
}

interface Entry {
  chunk: Buffer;
  rows: number;
  /** Its earliest span start (ms). */
  minStartMs: number;
  /** What its histograms and durations are made of, when the caller decoded them (span-folds.ts). */
  folds?: SpanBatch;
  resolve: (w: Written) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit {
  private queue: Entry[] = [];
  private active = 0;
  private readonly writers: number;
  private readonly maxRows: number;
  private readonly now: () => number;
  private readonly journal: FoldJournal | undefined;
  /** Transactions committed, and requests they held (for tests and /metrics-style introspection). */
  readonly counts = { transactions: 0, requests: 0 };

  constructor(
    private readonly pool: Pool,
    private readonly partitions: Partitions,
    opts: GroupCommitOptions = {},
  ) {
    this.writers = opts.writers ?? 1;
    this.maxRows = opts.maxRows ?? 20_000;
    this.now = opts.now ?? Date.now;
    this.journal = opts.journal;
  }

  /**
   * Queue encoded rows (CopyRows) and resolve once they are committed. `minStartMs`, the
   * earliest span start among them, tells whether any could be a retry of a span received the
   * day before (write-spans.ts); unknown: -Infinity.
   */
  write(chunk: Buffer, rows: number, minStartMs = -Infinity, folds?: SpanBatch): Promise<Written> {
    return new Promise<Written>((resolve, reject) => {
      this.queue.push({ chunk, rows, minStartMs, folds, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.writers && this.queue.length) {
      let rows = 0;
      let take = 0;
      while (
        take < this.queue.length &&
        (take === 0 || rows + this.queue[take]!.rows <= this.maxRows)
      )
        rows += this.queue[take++]!.rows;
      const group = this.queue.splice(0, take);
      this.active++;
      void this.flush(group).finally(() => {
        this.active--;
        this.pump();
      });
    }
  }

  private async flush(group: Entry[]): Promise<void> {
    let inserted: number;
    let folds: FoldSum | undefined;
    let journal: FoldJournal | undefined;
    let entry: JournalWrite | undefined;
    try {
      // Folded rows only when every request brought its spans' batch.
      folds = group.every((e) => e.folds) ? FoldSum.of(group.map((e) => e.folds!)) : undefined;
      // Under load (exports sharing this transaction or waiting behind it) its histograms are
      // folded with the next transactions'; a lone export writes its own, as ever.
      journal =
        folds && (group.length > 1 || this.queue.length > 0) && this.journal?.ready
          ? this.journal
          : undefined;
      entry = journal?.entry(folds!);
      inserted = await this.transaction(
        group.map((e) => e.chunk),
        Math.min(...group.map((e) => e.minStartMs)),
        folds,
        entry,
      );
      if (entry) journal!.settle(entry);
    } catch (err) {
      if (entry) journal!.settle(entry);
      if (group.length > 1 && !isDatabaseUnavailable(err)) {
        // A value PostgreSQL refused (or any other statement error) belongs to one request:
        // each one is tried alone, so only the request that carries it fails.
        for (const e of group) await this.flush([e]);
        return;
      }
      for (const e of group) e.reject(err);
      return;
    }
    this.counts.transactions++;
    this.counts.requests += group.length;
    // Spans already stored (retries) are not told apart per request: the group's new rows are
    // attributed in queue order, so totals are exact and a group without retries is exact per request.
    const answer = () => {
      for (const e of group) {
        const mine = Math.min(e.rows, inserted);
        inserted -= mine;
        e.resolve({ inserted: mine, duplicates: e.rows - mine });
      }
    };
    // Nothing waits behind this transaction: the burst may be over, so its exports are answered
    // once the histograms of every transaction before it are written (at the 200 a client reads
    // back what it sent). The writer slot is free meanwhile. A fold that fails leaves them in the
    // journal: still committed.
    if (this.journal?.hasPending && !this.queue.length)
      void this.journal
        .flush()
        .catch(() => {})
        .then(answer);
    else answer();
  }

  /** One transaction holding `chunks`; resolves with the spans that were new, after COMMIT. */
  private async transaction(
    chunks: Buffer[],
    minStartMs: number,
    folds: FoldSum | undefined,
    journal: JournalWrite | undefined,
  ): Promise<number> {
    // The day is this server's guess; the transaction confirms it on the database's clock and,
    // past midnight there, is written again on the day it names (received-day.ts).
    let day = utcDay(this.now());
    await this.ensureDay(day);
    const client = await this.pool.connect();
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const inserted = await writeSpans(client, chunks, day, minStartMs, folds, {
            confirmDay: true,
            journal,
          });
          client.release();
          return inserted;
        } catch (err) {
          if (!(err instanceof DayMoved) || attempt === 3) throw err;
          day = err.day;
          await this.ensureDay(day);
        }
      }
    } catch (err) {
      client.release(true); // a failed COPY may leave the session unusable: start a fresh one
      throw err;
    }
  }

  private async ensureDay(day: string): Promise<void> {
    await this.partitions.ensure('observations', [day]);
    await this.partitions.ensure('span_durations', [day]);
  }
}
