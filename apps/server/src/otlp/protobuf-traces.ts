/**
 * An ExportTraceServiceRequest decoded into exactly what trace ingest reads
 * (normalize-traces.ts): resources' attributes, and each span's ids, name,
 * kind, times and attributes, as plain objects of the same shape protobufjs
 * gives (protobuf.ts). protobufjs builds every message through its
 * constructor, a Long per timestamp and an object per field it knows; this
 * reads the same bytes with protobufjs's own Reader and keeps only those
 * fields. The parts ingest ignores (scopes, events, links, status, entity
 * refs) are still decoded by protobufjs, so a body is accepted or refused
 * exactly as before; on any error the body is decoded again by protobufjs,
 * whose message the client gets (a refused body costs a second decode).
 */
import protobuf from 'protobufjs';
import { TraceRequest } from './protobuf.ts';

type Reader = protobuf.Reader;
interface Decoder {
  decode(r: Reader, length: number, end: undefined, depth: number): unknown;
}

const root = (TraceRequest as unknown as { root: protobuf.Root }).root;
const decoderOf = (name: string) => root.lookupType(name) as unknown as Decoder;
const Scope = decoderOf('opentelemetry.proto.common.v1.InstrumentationScope');
const EntityRef = decoderOf('opentelemetry.proto.common.v1.EntityRef');
const Event = decoderOf('opentelemetry.proto.trace.v1.Span.Event');
const Link = decoderOf('opentelemetry.proto.trace.v1.Span.Link');
const Status = decoderOf('opentelemetry.proto.trace.v1.Status');

/** Unsigned 64-bit nanoseconds as protobufjs's Long carries them (values.ts reads low and high). */
interface Fixed64 {
  low: number;
  high: number;
  unsigned: true;
}

interface KeyValue {
  key: string | null;
  value: AnyValue | null;
}
type AnyValue = Record<string, unknown>;

interface Span {
  traceId: Uint8Array | null;
  spanId: Uint8Array | null;
  parentSpanId: Uint8Array | null;
  name: string | null;
  kind: number | null;
  startTimeUnixNano: Fixed64 | null;
  endTimeUnixNano: Fixed64 | null;
  attributes: KeyValue[];
}

export interface TraceRequestMessage {
  resourceSpans: Array<{
    resource: { attributes: KeyValue[] } | null;
    scopeSpans: Array<{ spans: Span[] }>;
  }>;
}

const limit = () => protobuf.Reader.recursionLimit;

/** Longest string the cache below keeps (attribute keys, names and most values are shorter). */
const CACHED_BYTES = 64;
const CACHE_SLOTS = 4096;

/**
 * Short strings seen before, by their bytes: attribute keys, span names and most attribute
 * values repeat from span to span, and reading one was a native call and a new string each
 * time (~7 % of the server's CPU). A hit is the same bytes, so the same string utf8Slice
 * gives (invalid UTF-8 included: both read it as Buffer.toString does); one entry a slot, the
 * last string wins. The bytes live in one fixed block (a Buffer per entry would pin whole pool
 * slabs of the request bodies they were copied next to).
 */
const cachedBytes = new Uint8Array(CACHE_SLOTS * CACHED_BYTES);
/** Length of each slot's bytes; -1: empty. */
const cachedLength = new Int16Array(CACHE_SLOTS).fill(-1);
const cachedText: string[] = new Array(CACHE_SLOTS);

/** A string field, as protobufjs's Reader.string reads it (a length past the end is cut there). */
function string(r: Reader): string {
  const buf = (r as unknown as { buf: Uint8Array }).buf;
  if (!Buffer.isBuffer(buf)) return r.string();
  const len = r.uint32();
  const start = r.pos;
  const end = Math.min(start + len, r.len);
  r.pos = end;
  const n = end - start;
  if (n > CACHED_BYTES) return buf.toString('utf8', start, end);
  let h = 0x811c9dc5 ^ n;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  const slot = (h ^ (h >>> 15)) & (CACHE_SLOTS - 1);
  const at = slot * CACHED_BYTES;
  if (cachedLength[slot] === n) {
    let same = true;
    for (let i = 0; i < n; i++)
      if (cachedBytes[at + i] !== buf[start + i]) {
        same = false;
        break;
      }
    if (same) return cachedText[slot]!;
  }
  const text = buf.toString('utf8', start, end);
  cachedBytes.set(buf.subarray(start, end), at);
  cachedLength[slot] = n;
  cachedText[slot] = text;
  return text;
}

/**
 * Enter a length-delimited message of `length` bytes: returns the reader's
 * previous end, to give back to `leave` (as protobufjs's generated decoders do).
 */
function enter(r: Reader, length: number, depth: number): number {
  if (depth > limit()) throw Error('maximum nesting depth exceeded');
  const end = r.pos + length;
  if (end > r.len) throw RangeError('index out of range');
  const outer = r.len;
  r.len = end;
  return outer;
}

function leave(r: Reader, end: number, outer: number): void {
  if (r.pos !== end) throw RangeError('index out of range');
  r.len = outer;
}

function fixed64(r: Reader): Fixed64 {
  const low = r.fixed32();
  return { low, high: r.fixed32(), unsigned: true };
}

function keyValue(r: Reader, length: number, depth: number): KeyValue {
  const outer = enter(r, length, depth);
  const end = r.len;
  const m: KeyValue = { key: null, value: null };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        m.key = string(r);
        break;
      case 2:
        m.value = anyValue(r, r.uint32(), depth + 1);
        break;
      case 3:
        r.int32(); // key_strindex: not used by OTLP/HTTP exporters
        break;
      default:
        r.skipType(t & 7, depth);
    }
  }
  leave(r, end, outer);
  return m;
}

/** Repeated `values` (field 1) of an ArrayValue or a KeyValueList. */
function values<T>(
  r: Reader,
  length: number,
  depth: number,
  item: (r: Reader, length: number, depth: number) => T,
): { values: T[] } {
  const outer = enter(r, length, depth);
  const end = r.len;
  const out: T[] = [];
  while (r.pos < end) {
    const t = r.uint32();
    if (t >>> 3 === 1) out.push(item(r, r.uint32(), depth + 1));
    else r.skipType(t & 7, depth);
  }
  leave(r, end, outer);
  return { values: out };
}

/** An AnyValue: only the members sent are own properties (values.ts tells them apart so). */
function anyValue(r: Reader, length: number, depth: number): AnyValue {
  const outer = enter(r, length, depth);
  const end = r.len;
  const m: AnyValue = {};
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        m.stringValue = string(r);
        break;
      case 2:
        m.boolValue = r.bool();
        break;
      case 3:
        m.intValue = r.int64();
        break;
      case 4:
        m.doubleValue = r.double();
        break;
      case 5:
        m.arrayValue = values(r, r.uint32(), depth + 1, anyValue);
        break;
      case 6:
        m.kvlistValue = values(r, r.uint32(), depth + 1, keyValue);
        break;
      case 7:
        m.bytesValue = r.bytes();
        break;
      case 8:
        r.int32(); // string_value_strindex
        break;
      default:
        r.skipType(t & 7, depth);
    }
  }
  leave(r, end, outer);
  return m;
}

function span(r: Reader, length: number, depth: number): Span {
  const outer = enter(r, length, depth);
  const end = r.len;
  const m: Span = {
    traceId: null,
    spanId: null,
    parentSpanId: null,
    name: null,
    kind: null,
    startTimeUnixNano: null,
    endTimeUnixNano: null,
    attributes: [],
  };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        m.traceId = r.bytes();
        break;
      case 2:
        m.spanId = r.bytes();
        break;
      case 3:
        r.string(); // trace_state
        break;
      case 4:
        m.parentSpanId = r.bytes();
        break;
      case 5:
        m.name = string(r);
        break;
      case 6:
        m.kind = r.int32();
        break;
      case 7:
        m.startTimeUnixNano = fixed64(r);
        break;
      case 8:
        m.endTimeUnixNano = fixed64(r);
        break;
      case 9:
        m.attributes.push(keyValue(r, r.uint32(), depth + 1));
        break;
      case 10:
      case 12:
      case 14:
        r.uint32(); // dropped counts
        break;
      case 11:
        Event.decode(r, r.uint32(), undefined, depth + 1);
        break;
      case 13:
        Link.decode(r, r.uint32(), undefined, depth + 1);
        break;
      case 15:
        Status.decode(r, r.uint32(), undefined, depth + 1);
        break;
      case 16:
        r.fixed32(); // flags
        break;
      default:
        r.skipType(t & 7, depth);
    }
  }
  leave(r, end, outer);
  return m;
}

function scopeSpans(r: Reader, length: number, depth: number): { spans: Span[] } {
  const outer = enter(r, length, depth);
  const end = r.len;
  const spans: Span[] = [];
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        Scope.decode(r, r.uint32(), undefined, depth + 1);
        break;
      case 2:
        spans.push(span(r, r.uint32(), depth + 1));
        break;
      case 3:
        r.string(); // schema_url
        break;
      default:
        r.skipType(t & 7, depth);
    }
  }
  leave(r, end, outer);
  return { spans };
}

function resource(r: Reader, length: number, depth: number): { attributes: KeyValue[] } {
  const outer = enter(r, length, depth);
  const end = r.len;
  const attributes: KeyValue[] = [];
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        attributes.push(keyValue(r, r.uint32(), depth + 1));
        break;
      case 2:
        r.uint32(); // dropped_attributes_count
        break;
      case 3:
        EntityRef.decode(r, r.uint32(), undefined, depth + 1);
        break;
      default:
        r.skipType(t & 7, depth);
    }
  }
  leave(r, end, outer);
  return { attributes };
}

function resourceSpans(r: Reader, length: number, depth: number) {
  const outer = enter(r, length, depth);
  const end = r.len;
  const m: TraceRequestMessage['resourceSpans'][number] = { resource: null, scopeSpans: [] };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        m.resource = resource(r, r.uint32(), depth + 1);
        break;
      case 2:
        m.scopeSpans.push(scopeSpans(r, r.uint32(), depth + 1));
        break;
      case 3:
        r.string(); // schema_url
        break;
      default:
        r.skipType(t & 7, depth);
    }
  }
  leave(r, end, outer);
  return m;
}

/** The lean decode alone; throws where protobufjs would (tests compare the two). */
export function decodeLean(body: Uint8Array): TraceRequestMessage {
  const r = protobuf.Reader.create(body);
  const out: TraceRequestMessage = { resourceSpans: [] };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 1) out.resourceSpans.push(resourceSpans(r, r.uint32(), 1));
    else r.skipType(t & 7, 0);
  }
  return out;
}

/** The codec trace ingest decodes protobuf bodies with (parse.ts): lean, protobufjs on error. */
export const LeanTraceRequest = {
  decode(body: Uint8Array): unknown {
    try {
      return decodeLean(body);
    } catch {
      return TraceRequest.decode(body);
    }
  },
};
