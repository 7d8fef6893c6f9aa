/**
 * `COPY ... FROM STDIN` with its data sent together with the statement: one
 * round trip instead of two. pg-copy-streams waits for PostgreSQL's
 * CopyInResponse before it sends any data, and on an event loop busy decoding
 * other exports that wait was a turn of the loop per COPY while PostgreSQL sat
 * in ClientRead holding the ingest transaction open (docs/scaling.md). The
 * protocol allows it: the backend reads the CopyData that follows once it is
 * in COPY mode, and if the statement fails first it ignores CopyData and
 * CopyDone outside COPY, as the protocol says.
 */
import type { Connection } from 'pg';
import type { PoolClient } from '../db/pool.ts';

interface WireConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

class CopyIn {
  /** pg sets this for query_timeout; the query's own outcome is the promise. */
  callback: () => void = () => {};
  rowCount = 0;
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: Connection): void {
    const c = connection as unknown as WireConnection;
    c.query(this.text);
    c.sendCopyFromChunk(this.data);
    c.endCopyFrom();
  }

  handleCopyInResponse(): void {} // the data is on its way already

  handleCommandComplete(msg: { text?: string }): void {
    const m = /COPY (\d+)/.exec(msg?.text ?? '');
    if (m) this.rowCount = Number(m[1]);
  }

  handleReadyForQuery(): void {
    this.callback();
    this.resolve(this.rowCount);
  }

  handleError(err: unknown): void {
    this.callback();
    this.reject(err);
  }
}

/** Run `COPY <target> FROM STDIN (FORMAT binary)` with `data` (header to trailer); resolves to the rows copied. */
export function copyIn(client: PoolClient, target: string, data: Buffer): Promise<number> {
  const q = new CopyIn(`COPY ${target} FROM STDIN (FORMAT binary)`, data);
  client.query(q);
  return q.done;
}
