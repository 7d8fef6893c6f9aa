/**
 * Compact binary form of the detector's state (DetectorStateJSON), as the
 * server stores it: a small JSON header (options, counters, per-quantile
 * baselines; non-finite numbers kept), the ring of recent points and
 * (version 3) the longer p50 history of the long scan, as packed arrays.
 * ~12 KB for a day-old series instead of ~24 KB of JSON, and exact: a state
 * read back continues bit for bit like the one written. Version 1 states
 * (no long history) are still read. Plain Uint8Array and DataView, so the
 * core stays free of Node APIs (a Node Buffer is a Uint8Array: pass it in as is).
 */
import type { DetectorStateJSON } from './state.ts';

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

/** JSON.stringify turns Infinity into null; keep non-finite numbers as they are. */
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

/** A column codec: 4-byte integers of value / unit when exact, else doubles (little-endian). */
interface Column {
  bytes: number;
  write(view: DataView, p: number, x: number): void;
  read(view: DataView, p: number): number;
}
const DOUBLE: Column = {
  bytes: 8,
  write: (view, p, x) => view.setFloat64(p, x, true),
  read: (view, p) => view.getFloat64(p, true),
};
const scaled = (unit: number): Column => ({
  bytes: 4,
  write: (view, p, x) => view.setInt32(p, Math.round(x / unit), true),
  read: (view, p) => (unit === 1e-6 ? view.getInt32(p, true) / 1e6 : view.getInt32(p, true) * unit),
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

export function encodeState(state: DetectorStateJSON): Uint8Array {
  const { ring, long: longHistory, ...rest } = state;
  const long: Long = longHistory ?? { t: [], y: [] };
  if (long.t.length !== long.y.length) throw new Error('malformed detector state: long history');
  const header = new TextEncoder().encode(JSON.stringify(rest, replacer));
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
  const buf = new Uint8Array(size + 4 + kl * 2 * col.l.bytes);
  const view = new DataView(buf.buffer);
  let p = 0;
  buf[p++] = MAGIC;
  buf[p++] = VERSION;
  buf[p++] = flags;
  view.setUint32(p, header.length, true);
  p += 4;
  buf.set(header, p);
  p += header.length;
  view.setUint32(p, k, true);
  p += 4;
  const put = (c: Column, xs: number[]) => {
    for (let i = 0; i < xs.length; i++) {
      c.write(view, p, xs[i]!);
      p += c.bytes;
    }
  };
  put(col.t, ring.t);
  put(col.g, ring.g);
  put(col.c, ring.c);
  put(col.y, ring.y50);
  put(col.y, ring.y99);
  view.setUint32(p, kl, true);
  p += 4;
  put(col.l, long.t);
  put(col.l, long.y);
  return buf;
}

export function decodeState(buf: Uint8Array): DetectorStateJSON {
  const version = buf[1];
  if (buf[0] !== MAGIC || (version !== 1 && version !== VERSION))
    throw new Error('unsupported detector state encoding');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const flags = buf[2]!;
  const col = columns(flags);
  let p = 3;
  const hl = view.getUint32(p, true);
  p += 4;
  const rest = JSON.parse(new TextDecoder().decode(buf.subarray(p, p + hl)), reviver) as Omit<
    DetectorStateJSON,
    'ring' | 'long'
  >;
  p += hl;
  const get = (c: Column, n: number): number[] => {
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      out[i] = c.read(view, p);
      p += c.bytes;
    }
    return out;
  };
  const k = view.getUint32(p, true);
  p += 4;
  const ring: Ring = {
    t: get(col.t, k),
    g: get(col.g, k),
    c: get(col.c, k),
    y50: get(col.y, k),
    y99: get(col.y, k),
  };
  if (version === 1) return { ...rest, ring };
  const kl = view.getUint32(p, true);
  p += 4;
  const long: Long = { t: get(col.l, kl), y: get(col.l, kl) };
  return { ...rest, ring, long };
}
