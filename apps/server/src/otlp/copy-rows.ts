/**
 * Rows for `COPY ... FROM STDIN (FORMAT binary)`, written straight into one
 * growing buffer: no text encoding of bytea/float/json arrays on either side
 * (pg's text parameters were ~6% of ingest CPU, and PostgreSQL parsed them
 * back). Format: https://www.postgresql.org/docs/current/sql-copy.html
 */

/** The 11-byte signature, 4 bytes of flags and 4 of header extension length. */
export const COPY_HEADER = Buffer.concat([
  Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
  Buffer.alloc(8),
]);
/** A field count of -1 ends the data. */
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/** A binary COPY's whole data: its rows between the header and the trailer. */
export const copyData = (chunks: Buffer[]): Buffer =>
  Buffer.concat([COPY_HEADER, ...chunks, COPY_TRAILER]);

const TWO32 = 4294967296;
/** PostgreSQL timestamps count microseconds from 2000-01-01 UTC. */
const PG_EPOCH_MS = 946_684_800_000;

/** The stored timestamptz of `ms` (since the Unix epoch): microseconds since 2000-01-01 UTC. */
export function pgMicros(ms: number): number {
  return Math.round((ms - PG_EPOCH_MS) * 1000);
}

/**
 * The UTC minute (minutes since the Unix epoch) of a start time as stored, to
 * the microsecond: a span 0.4 µs before a minute's end is stored at the next
 * minute's first instant, so its histogram and durations go there too.
 */
export function storedMinute(ms: number): number {
  return Math.floor(pgMicros(ms) / 60_000_000) + PG_EPOCH_MS / 60_000;
}

export class CopyRows {
  buf: Buffer;
  length = 0;
  rows = 0;

  constructor(bytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(bytes);
  }

  /** Make room for `n` more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  /** Start a row of `fields` fields (the caller reserved room for its fixed-size part). */
  row(fields: number): void {
    this.length = this.buf.writeInt16BE(fields, this.length);
    this.rows++;
  }

  null(): void {
    this.length = this.buf.writeInt32BE(-1, this.length);
  }

  bytes(b: Uint8Array): void {
    this.length = this.buf.writeInt32BE(b.length, this.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  /** An int8 below 2^53. */
  int8(v: number): void {
    const hi = Math.floor(v / TWO32);
    let at = this.buf.writeInt32BE(8, this.length);
    at = this.buf.writeInt32BE(hi, at);
    this.length = this.buf.writeUInt32BE(v - hi * TWO32, at);
  }

  int2(v: number): void {
    const at = this.buf.writeInt32BE(2, this.length);
    this.length = this.buf.writeInt16BE(v, at);
  }

  bool(v: boolean): void {
    const at = this.buf.writeInt32BE(1, this.length);
    this.buf[at] = v ? 1 : 0;
    this.length = at + 1;
  }

  float8(v: number): void {
    const at = this.buf.writeInt32BE(8, this.length);
    this.length = this.buf.writeDoubleBE(v, at);
  }

  /** A timestamptz from milliseconds since the Unix epoch (kept to the microsecond). */
  timestampMs(ms: number): void {
    this.int8(pgMicros(ms));
  }

  /** A jsonb value from its JSON text (binary jsonb is a version byte, 1, then the text). */
  jsonb(text: string): void {
    this.reserve(5 + text.length * 3);
    const start = this.length;
    this.buf[start + 4] = 1;
    const n = this.buf.write(text, start + 5, 'utf8');
    this.buf.writeInt32BE(n + 1, start);
    this.length = start + 5 + n;
  }

  /** The rows written so far (a view, valid until the next write). */
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}
