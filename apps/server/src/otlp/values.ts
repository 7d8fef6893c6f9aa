import type { AttrValue, Attributes } from '@onset/core';

/** Protobuf int64 arrives as a Long-like {low, high}, a number, or (JSON) a decimal string. */
export type Int64Like = { low: number; high: number } | number | string | null | undefined;

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

export function int64ToNumber(v: Int64Like): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  return (v.high >>> 0) * TWO32 + (v.low >>> 0);
}

/** Ids: bytes from protobuf, hex text from JSON. Returns null when malformed. */
export function idBytes(v: unknown, length: number): Buffer | null {
  let buf: Buffer;
  if (typeof v === 'string') {
    if (v.length !== length * 2 || !/^[0-9a-fA-F]*$/.test(v)) return null;
    buf = Buffer.from(v, 'hex');
  } else if (v instanceof Uint8Array) {
    if (v.length !== length) return null;
    buf = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
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
  stringValue?: string | null;
  boolValue?: boolean | null;
  intValue?: Int64Like;
  doubleValue?: number | string | null;
  arrayValue?: { values?: AnyValueLike[] | null } | null;
  kvlistValue?: { values?: KeyValueLike[] | null } | null;
  bytesValue?: Uint8Array | string | null;
}
export interface KeyValueLike {
  key: string;
  value?: AnyValueLike | null;
}

function has(o: object, k: string): boolean {
  // protobufjs leaves unset oneof members as prototype defaults; own props are the set ones.
  return Object.prototype.hasOwnProperty.call(o, k);
}

function anyValue(v: AnyValueLike | null | undefined, depth = 0): AttrValue {
  if (!v || depth > 8) return null;
  if (has(v, 'stringValue') && v.stringValue != null) return v.stringValue;
  if (has(v, 'boolValue') && v.boolValue != null) return v.boolValue;
  if (has(v, 'intValue') && v.intValue != null) return int64ToNumber(v.intValue);
  if (has(v, 'doubleValue') && v.doubleValue != null) return Number(v.doubleValue);
  if (has(v, 'arrayValue') && v.arrayValue)
    return (v.arrayValue.values ?? []).map((x) => anyValue(x, depth + 1));
  if (has(v, 'kvlistValue') && v.kvlistValue)
    return attributes(v.kvlistValue.values ?? [], depth + 1);
  if (has(v, 'bytesValue') && v.bytesValue != null)
    return typeof v.bytesValue === 'string'
      ? v.bytesValue
      : Buffer.from(v.bytesValue).toString('base64');
  return null;
}

export function attributes(kvs: KeyValueLike[] | null | undefined, depth = 0): Attributes {
  const out: Attributes = {};
  if (!kvs) return out;
  for (const kv of kvs)
    if (kv && typeof kv.key === 'string') out[kv.key] = anyValue(kv.value, depth);
  return out;
}
