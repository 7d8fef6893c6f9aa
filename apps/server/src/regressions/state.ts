/**
 * Compact binary form of the core detector's state (DetectorStateJSON), as
 * stored in regress_state.state: a small JSON header (options, counters,
 * per-quantile baselines; non-finite numbers kept), the ring of recent
 * points and (version 3) the longer p50 history of the long scan, as packed
 * arrays. ~12 KB for a day-old series instead of ~24 KB of JSON, and exact: a state
 * read back continues bit for bit like the one written. Version 1 states
 * (no long history) are still read.
 */
import type { DetectorStateJSON } from '@onset/core';
import type { PoolClient } from '../db/pool.ts';
import { copyTuples } from './points.ts';

const MAGIC = 0x52; // 'R'
/** Version 3 added the long p50 history (version 2, with counts in it, never shipped outside development). */
const VERSION = 3;
const T_MINUTES = 1;
const G_INT32 = 2;
/** Version 3: counts as integers, log values as integer micro-units (the detector rounds them to 1e-6). */
const C_INT32 = 4;
const Y_MICRO = 8;
/** The long p50 history (whole-minute steps and micro-units of log p50) as 4-byte integers. */
const L_INT32 = 16;

type Ring = DetectorStateJSON['ring'];
type Long = NonNullable<DetectorStateJSON['long']>;

/** JSON.stringify turns Infinity into null; the detector keeps ±Infinity in its thresholds. */
function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return { $n: String(value) };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && '$n' in value && Object.keys(value).length === 1)
    return Number((value as { $n: string }).$n);
  return value;
}

const inMinutes = (ts: number[]) =>
  ts.every((t) => t % 60_000 === 0 && Math.abs(t / 60_000) < 2 ** 31);
const int32 = (xs: number[]) => xs.every((x) => Number.isInteger(x) && Math.abs(x) < 2 ** 31);
/** Values the detector rounded to 1e-6: kept as integers of micro-units when that reads back exactly. */
const micro = (xs: number[]) =>
  xs.every((x) => Math.abs(x) < 2000 && Math.round(x * 1e6) / 1e6 === x);

/** A column codec: 4-byte integers of value / unit when exact, else doubles. */
interface Column {
  bytes: number;
  write(buf: Buffer, p: number, x: number): number;
  read(buf: Buffer, p: number): number;
}
const DOUBLE: Column = {
  bytes: 8,
  write: (buf, p, x) => buf.writeDoubleLE(x, p),
  read: (buf, p) => buf.readDoubleLE(p),
};
const scaled = (unit: number): Column => ({
  bytes: 4,
  write: (buf, p, x) => buf.writeInt32LE(Math.round(x / unit), p),
  read: (buf, p) => (unit === 1e-6 ? buf.readInt32LE(p) / 1e6 : buf.readInt32LE(p) * unit),
});

function columns(flags: number) {
  return {
    t: flags & T_MINUTES ? scaled(60_000) : DOUBLE,
    g: flags & G_INT32 ? scaled(1) : DOUBLE,
    c: flags & C_INT32 ? scaled(1) : DOUBLE,
    y: flags & Y_MICRO ? scaled(1e-6) : DOUBLE,
    l: flags & L_INT32 ? scaled(1) : DOUBLE,
  };
}

export function encodeState(state: DetectorStateJSON): Buffer {
  const { ring, long: longHistory, ...rest } = state;
  const long: Long = longHistory ?? { t: [], y: [] };
  if (long.t.length !== long.y.length) throw new Error('malformed detector state: long history');
  const header = Buffer.from(JSON.stringify(rest, replacer), 'utf8');
  const k = ring.t.length;
  const kl = long.t.length;
  let flags = 0;
  if (inMinutes(ring.t)) flags |= T_MINUTES;
  if (ring.g.every((g) => Number.isInteger(g) && g >= 0 && g < 2 ** 31)) flags |= G_INT32;
  if (int32(ring.c)) flags |= C_INT32;
  if (micro(ring.y50) && micro(ring.y99)) flags |= Y_MICRO;
  if (int32(long.t) && int32(long.y)) flags |= L_INT32;
  const col = columns(flags);
  const size =
    3 + 4 + header.length + 4 + k * (col.t.bytes + col.g.bytes + col.c.bytes + 2 * col.y.bytes);
  const buf = Buffer.allocUnsafe(size + 4 + kl * 2 * col.l.bytes);
  let p = 0;
  buf[p++] = MAGIC;
  buf[p++] = VERSION;
  buf[p++] = flags;
  p = buf.writeUInt32LE(header.length, p);
  p += header.copy(buf, p);
  p = buf.writeUInt32LE(k, p);
  const put = (c: Column, xs: number[]) => {
    for (let i = 0; i < xs.length; i++) p = c.write(buf, p, xs[i]!);
  };
  put(col.t, ring.t);
  put(col.g, ring.g);
  put(col.c, ring.c);
  put(col.y, ring.y50);
  put(col.y, ring.y99);
  p = buf.writeUInt32LE(kl, p);
  put(col.l, long.t);
  put(col.l, long.y);
  return buf;
}

export function decodeState(buf: Buffer): DetectorStateJSON {
  const version = buf[1];
  if (buf[0] !== MAGIC || (version !== 1 && version !== VERSION))
    throw new Error('unsupported detector state encoding');
  const flags = buf[2]!;
  const col = columns(flags);
  let p = 3;
  const hl = buf.readUInt32LE(p);
  p += 4;
  const rest = JSON.parse(buf.toString('utf8', p, p + hl), reviver) as Omit<
    DetectorStateJSON,
    'ring' | 'long'
  >;
  p += hl;
  const get = (c: Column, n: number): number[] => {
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      out[i] = c.read(buf, p);
      p += c.bytes;
    }
    return out;
  };
  const k = buf.readUInt32LE(p);
  p += 4;
  const ring: Ring = {
    t: get(col.t, k),
    g: get(col.g, k),
    c: get(col.c, k),
    y50: get(col.y, k),
    y99: get(col.y, k),
  };
  if (version === 1) return { ...rest, ring };
  const kl = buf.readUInt32LE(p);
  p += 4;
  const long: Long = { t: get(col.l, kl), y: get(col.l, kl) };
  return { ...rest, ring, long };
}

export interface StoredState {
  through: number;
  state: Buffer;
}

/**
 * States of these series, read through binary COPY: as a query result a
 * bytea arrives hex-encoded (twice the bytes, and a decode per row), which
 * dominated loading 10,000 states.
 */
export async function readStates(
  client: PoolClient,
  ids: readonly number[],
): Promise<Map<number, StoredState>> {
  const out = new Map<number, StoredState>();
  if (!ids.length) return out;
  for (const id of ids) if (!Number.isSafeInteger(id)) throw new Error(`bad series id ${id}`);
  await copyTuples(
    client,
    `COPY (SELECT series_id, (extract(epoch FROM through) * 1000)::float8, state FROM regress_state
            WHERE series_id = ANY('{${ids.join(',')}}'::bigint[])) TO STDOUT (FORMAT binary)`,
    (buf, pos) => {
      let p = pos + 2 + 4;
      const id = Number(buf.readBigInt64BE(p));
      p += 8 + 4;
      const through = buf.readDoubleBE(p);
      p += 8;
      const len = buf.readInt32BE(p);
      p += 4;
      out.set(id, { through, state: Buffer.from(buf.subarray(p, p + len)) });
    },
  );
  return out;
}
