import type { AttrValue, Attributes } from '@onset/core';
import { cleanText, MAX_KEY_CHARS, MAX_VALUE_CHARS } from '../text/sanitize.ts';

/**
 * Protobuf int64 arrives as a Long-like {low, high, unsigned} (fixed64/uint64
 * unsigned, int64/sfixed64 signed), a number, or (JSON) a decimal string.
 */
export type Int64Like =
  { low: number; high: number; unsigned?: boolean } | number | string | null | undefined;

const TWO32 = 4294967296;

/** int64 nanoseconds -> milliseconds as a float (sub-µs precision is not needed for wall time). */
export function nanosToMs(v: Int64Like): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v / 1e6;
  if (typeof v === 'string') {
    if (v.length <= 15) return Number(v) / 1e6;
    // Split to keep precision: ms part from the leading digits, remainder separately.
    const ms = Number(v.slice(0, -6));
    return ms + Number(v.slice(-6)) / 1e6;
  }
  return ((v.high >>> 0) * TWO32 + (v.low >>> 0)) / 1e6;
}

/** end - start in microseconds, exact for any realistic duration. */
export function diffNanosToUs(start: Int64Like, end: Int64Like): number {
  if (start && end && typeof start === 'object' && typeof end === 'object') {
    const hi = (end.high >>> 0) - (start.high >>> 0);
    const lo = (end.low >>> 0) - (start.low >>> 0);
    return (hi * TWO32 + lo) / 1000;
  }
  if (typeof start === 'string' && typeof end === 'string') {
    try {
      return Number(BigInt(end) - BigInt(start)) / 1000;
    } catch {
      return NaN;
    }
  }
  return (nanosToMs(end) - nanosToMs(start)) * 1000;
}

/** The value as a double (exact up to 2^53); signed int64 (intValue) keeps its sign. NaN when unreadable. */
export function int64ToNumber(v: Int64Like): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  if (typeof v !== 'object') return NaN;
  const high = v.unsigned === false ? v.high | 0 : v.high >>> 0;
  return high * TWO32 + (v.low >>> 0);
}

/** Ids: bytes from protobuf, hex text from JSON. Returns null when malformed. */
export function idBytes(v: unknown, length: number): Buffer | null {
  let buf: Buffer;
  if (typeof v === 'string') {
    if (v.length !== length * 2 || !/^[0-9a-fA-F]*$/.test(v)) return null;
    buf = Buffer.from(v, 'hex');
  } else if (v instanceof Uint8Array) {
    if (v.length !== length) return null;
    // protobufjs already hands out Buffers (views of the body): no second view per id.
    buf = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  } else return null;
  for (const b of buf) if (b !== 0) return buf;
  return null; // all-zero ids are invalid per the trace spec
}

/** Optional parent id: empty means root. */
export function parentIdBytes(v: unknown): Buffer | null | 'invalid' {
  if (v === undefined || v === null) return null;
  if ((typeof v === 'string' || v instanceof Uint8Array) && v.length === 0) return null;
  return idBytes(v, 8) ?? 'invalid';
}

interface AnyValueLike {
  stringValue?: unknown;
  boolValue?: unknown;
  intValue?: unknown;
  doubleValue?: unknown;
  arrayValue?: { values?: unknown } | null;
  kvlistValue?: { values?: unknown } | null;
  bytesValue?: unknown;
}
export interface KeyValueLike {
  key: string;
  value?: AnyValueLike | null;
}

/** Deepest array/kvlist nesting kept in an attribute value; deeper parts read as null. */
export const MAX_VALUE_DEPTH = 8;
/** Most elements kept from one array or kvlist value. */
const MAX_VALUE_ITEMS = 1024;

function has(o: object, k: string): boolean {
  // protobufjs leaves unset oneof members as prototype defaults; own props are the set ones.
  return Object.prototype.hasOwnProperty.call(o, k);
}

const isInt64Like = (v: unknown): v is Int64Like =>
  typeof v === 'number' ||
  typeof v === 'string' ||
  (typeof v === 'object' && v !== null && 'low' in v && 'high' in v);

/**
 * One AnyValue, defensively: nested values are not schema-checked (a JSON
 * value nested 1,000 deep would overflow the checker's stack), so every member
 * is type-checked here; anything unreadable reads as null rather than failing
 * the span.
 */
function anyValue(v: AnyValueLike | null | undefined, depth = 0): AttrValue {
  if (!v || typeof v !== 'object' || depth > MAX_VALUE_DEPTH) return null;
  if (has(v, 'stringValue') && typeof v.stringValue === 'string')
    return cleanText(v.stringValue, MAX_VALUE_CHARS);
  if (has(v, 'boolValue') && typeof v.boolValue === 'boolean') return v.boolValue;
  if (has(v, 'intValue') && v.intValue != null && isInt64Like(v.intValue)) {
    const n = int64ToNumber(v.intValue);
    return Number.isFinite(n) ? n : null;
  }
  if (
    has(v, 'doubleValue') &&
    (typeof v.doubleValue === 'number' || typeof v.doubleValue === 'string')
  ) {
    const n = Number(v.doubleValue);
    return Number.isFinite(n) ? n : null;
  }
  if (has(v, 'arrayValue') && v.arrayValue && typeof v.arrayValue === 'object') {
    const values = v.arrayValue.values;
    return Array.isArray(values)
      ? values.slice(0, MAX_VALUE_ITEMS).map((x) => anyValue(x as AnyValueLike, depth + 1))
      : [];
  }
  if (has(v, 'kvlistValue') && v.kvlistValue && typeof v.kvlistValue === 'object') {
    const values = v.kvlistValue.values;
    return Array.isArray(values)
      ? attributes(values.slice(0, MAX_VALUE_ITEMS) as KeyValueLike[], depth + 1)
      : {};
  }
  if (has(v, 'bytesValue') && v.bytesValue != null) {
    if (typeof v.bytesValue === 'string') return cleanText(v.bytesValue, MAX_VALUE_CHARS);
    if (v.bytesValue instanceof Uint8Array)
      return cleanText(Buffer.from(v.bytesValue).toString('base64'), MAX_VALUE_CHARS);
  }
  return null;
}

/**
 * Attributes as a plain map: keys cleaned and cut (NUL and lone surrogates
 * become U+FFFD), string values likewise; `__proto__` is an ordinary key
 * (the map has no prototype).
 */
export function attributes(kvs: unknown, depth = 0): Attributes {
  const out: Attributes = Object.create(null);
  if (!Array.isArray(kvs)) return out;
  for (const kv of kvs as Array<KeyValueLike | null>)
    if (kv && typeof kv === 'object' && typeof kv.key === 'string')
      out[cleanText(kv.key, MAX_KEY_CHARS)] = anyValue(kv.value, depth);
  return out;
}
