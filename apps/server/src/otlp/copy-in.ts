/**
 * `COPY ... FROM STDIN` with its data sent together with the statement: one
 * round trip instead of two. pg-copy-streams waits for PostgreSQL's
 * CopyInResponse before it sends any data, and on an event loop busy decoding
 * other exports that wait was a turn of the loop per COPY while PostgreSQL sat
 * in ClientRead holding the ingest transaction open (docs/scaling.md). The
 * protocol allows it: the backend reads the CopyData that follows once it is
 * in COPY mode, and if the statement fails first it ignores CopyData and
 * CopyDone outside COPY, as the protocol says.
 *
 * `pipeline` goes further: a whole transaction (BEGIN, its statements, its
 * COPYs, COMMIT) as one simple query in one write, each COPY's data right
 * behind the query. The backend runs the statements in order and reads each
 * COPY's data when it gets there; at the first error it skips the rest of the
 * query and drops the CopyData still to come (the protocol's rule for a COPY
 * in a simple query), leaving the transaction aborted for the caller to roll
 * back. The transaction then never waits for this server's event loop between
 * its statements.
 */
import type { Connection } from 'pg';
import type { PoolClient } from '../db/pool.ts';

interface WireConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/** A statement of a pipelined query: SQL, or a binary `COPY <target> FROM STDIN` with its data. */
export type Piped = string | { copy: string; data: Buffer };

class PipedQuery {
  /** pg sets this for query_timeout; the query's own outcome is the promise. */
  callback: () => void = () => {};
  /** Rows of each COPY, in order. */
  readonly copied: number[] = [];
  readonly done: Promise<number[]>;
  private resolve!: (rows: number[]) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly text: string,
    private readonly data: Buffer[],
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: Connection): void {
    const c = connection as unknown as WireConnection;
    c.query(this.text);
    for (const d of this.data) {
      c.sendCopyFromChunk(d);
      c.endCopyFrom();
    }
  }

  handleCopyInResponse(): void {} // the data is on its way already
  handleRowDescription(): void {} // a statement's rows are not read
  handleDataRow(): void {}
  handleEmptyQuery(): void {}

  handleCommandComplete(msg: { text?: string }): void {
    const m = /^COPY (\d+)/.exec(msg?.text ?? '');
    if (m) this.copied.push(Number(m[1]));
  }

  handleReadyForQuery(): void {
    this.callback();
    this.resolve(this.copied);
  }

  /** pg ends the query at its error (the ReadyForQuery after it is not passed on). */
  handleError(err: unknown): void {
    this.callback();
    this.reject(err);
  }
}

/**
 * Run `statements` as one simple query sent in one write (above); resolves to the rows of each
 * COPY once the backend is ready again, rejects with the first error.
 */
export function pipeline(client: PoolClient, statements: Piped[]): Promise<number[]> {
  const text = statements
    .map((s) => (typeof s === 'string' ? s : `COPY ${s.copy} FROM STDIN (FORMAT binary)`))
    .join(';\n');
  const data = statements.flatMap((s) => (typeof s === 'string' ? [] : [s.data]));
  const q = new PipedQuery(text, data);
  client.query(q);
  return q.done;
}

/** Run `COPY <target> FROM STDIN (FORMAT binary)` with `data` (header to trailer); resolves to the rows copied. */
export async function copyIn(client: PoolClient, target: string, data: Buffer): Promise<number> {
  const [rows] = await pipeline(client, [{ copy: target, data }]);
  return rows ?? 0;
}
