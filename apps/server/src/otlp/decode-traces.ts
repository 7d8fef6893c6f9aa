/**
 * The CPU-heavy half of a trace export, run in a worker thread (decode-pool.ts):
 * body -> decoded message -> normalised spans -> binary COPY rows. Spans are
 * grouped by (series, resource); a row carries zeros where its series and
 * resource ids go, which the main thread fills in once the registry has
 * answered (`fillIds`). What crosses threads is one byte buffer, a few typed
 * arrays and the distinct labels: no per-span objects.
 */
import type { ResourceLabels, SeriesLabels } from '@onset/core';
import { HttpError } from '../http/errors.ts';
import type { Encoding } from './body.ts';
import { CopyRows, storedMinute } from './copy-rows.ts';
import { checkTracesJson } from './json-schema.ts';
import { BroadcastChannel } from 'node:worker_threads';
import {
  EXEMPLAR_RATES_CHANNEL,
  ExemplarSampler,
  traceUnit,
  type ExemplarGroup,
} from './exemplars.ts';
import { keptAttributes, normalizeTraces, type SpanLimits } from './normalize-traces.ts';
import { parse } from './parse.ts';
import { LeanTraceRequest } from './protobuf-traces.ts';
import { resourceKey, seriesKeyText } from './registry.ts';

const DAY_MS = 86_400_000;
/** Bytes of one encoded span without its attributes (ids, numbers, flag and field headers). */
const FIXED_ROW_BYTES = 2 + 10 * 4 + 16 + 8 + 8 + 8 + 8 + 8 + 8 + 2 + 1;
/** This thread's exemplar choice (the main thread or a decode worker). */
const exemplars = new ExemplarSampler();
// Keep rates come from the main thread's refresher (exemplar-rates.ts), to every decoding thread.
const rates = new BroadcastChannel(EXEMPLAR_RATES_CHANNEL);
rates.onmessage = (e) => exemplars.setRates((e as { data: Map<string, number> }).data);
rates.unref();

/** Spans of one (series, resource): `weight` of them. */
export interface SpanGroup {
  series: SeriesLabels;
  resource: ResourceLabels;
  weight: number;
}

export interface DecodedTraces {
  ok: true;
  rejected: number;
  reasons: string[];
  /** Binary COPY rows of the accepted spans, ids zeroed. */
  rows: Uint8Array;
  rowCount: number;
  /** Byte offset where each row starts, plus the end: rowCount + 1 entries. */
  rowStarts: Int32Array;
  /** Byte offset of each row's series_id value (its resource_id value follows 12 bytes later). */
  idAt: Int32Array;
  /** Each row's index in `groups`. */
  rowGroup: Int32Array;
  groups: SpanGroup[];
  /** Each group's key for exemplar keep rates (exemplars.ts): series key text and resource key. */
  groupKeys: string[];
  /** Days (since the epoch, UTC) the spans start on: their histogram partitions. */
  days: number[];
  /** The earliest span start (ms since the epoch; Infinity without spans). */
  minStartMs: number;
  /** Each row's start minute as stored (ms since the epoch) and duration (µs): its histogram and durations (span-folds.ts). */
  rowMinuteMs: Float64Array;
  rowDurationUs: Float64Array;
  /** service.instance.id shared by every resource of the request, if any (self-trace loop guard). */
  instanceId: string | null;
}

export interface RefusedTraces {
  ok: false;
  status: number;
  code: string;
  message: string;
}

interface ResourceSpansLike {
  resource?: {
    attributes?: Array<{ key?: string; value?: { stringValue?: unknown } | null }> | null;
  } | null;
}

function sharedInstanceId(req: { resourceSpans?: ResourceSpansLike[] | null }): string | null {
  const rs = req.resourceSpans;
  if (!Array.isArray(rs) || !rs.length) return null;
  let id: string | null = null;
  for (const r of rs) {
    const v = r?.resource?.attributes?.find((a) => a?.key === 'service.instance.id')?.value
      ?.stringValue;
    if (typeof v !== 'string' || (id !== null && v !== id)) return null;
    id = v;
  }
  return id;
}

export function decodeTraces(
  body: Uint8Array,
  encoding: Encoding,
  limits: SpanLimits,
): DecodedTraces | RefusedTraces {
  let req: unknown;
  try {
    req = parse(body, encoding, LeanTraceRequest, checkTracesJson, 'ExportTraceServiceRequest');
  } catch (err) {
    if (err instanceof HttpError)
      return { ok: false, status: err.statusCode, code: err.code, message: err.message };
    throw err;
  }
  const norm = normalizeTraces(req as never, limits);
  const obs = norm.observations;
  const n = obs.length;
  const rows = new CopyRows(n * (FIXED_ROW_BYTES + 64) + 16);
  const rowStarts = new Int32Array(n + 1);
  const idAt = new Int32Array(n);
  const rowGroup = new Int32Array(n);
  const rowMinuteMs = new Float64Array(n);
  const rowDurationUs = new Float64Array(n);
  const groups: SpanGroup[] = [];
  // Groups by resource key, then series key: a span's group is found without building its
  // (series, resource) key string (spans of one ResourceSpans share their resource object).
  const groupOf = new Map<string, Map<string, number>>();
  let lastResource: ResourceLabels | null = null;
  let ofResource = new Map<string, number>();
  const groupKeys: string[] = [];
  // Each group's exemplar counters by minute (this export's spans of a group spread over minutes).
  const counters: ExemplarGroup[] = [];
  const days = new Set<number>();
  let minStartMs = Infinity;
  for (let i = 0; i < n; i++) {
    const o = obs[i]!;
    if (o.startMs < minStartMs) minStartMs = o.startMs;
    if (o.resource !== lastResource) {
      lastResource = o.resource;
      const rk = resourceKey(o.resource);
      let m = groupOf.get(rk);
      if (!m) groupOf.set(rk, (m = new Map()));
      ofResource = m;
    }
    const sk = seriesKeyText(o.series);
    let g = ofResource.get(sk);
    if (g === undefined) {
      g = groups.length;
      ofResource.set(sk, g);
      groupKeys.push(`${sk}\u0001${resourceKey(o.resource)}`);
      counters.push(exemplars.group(groupKeys[g]!));
      groups.push({ series: o.series, resource: o.resource, weight: 0 });
    }
    groups[g]!.weight++;
    // The minute of the start as stored (to the µs), as SQL's date_trunc sees it.
    const minute = storedMinute(o.startMs);
    const counter = counters[g]!.counter(minute);
    const exemplar = exemplars.keep(counter, traceUnit(o.traceId));
    rowGroup[i] = g;
    rowMinuteMs[i] = minute * 60_000;
    rowDurationUs[i] = o.durationUs;
    days.add(Math.floor((minute * 60_000) / DAY_MS));
    rows.reserve(FIXED_ROW_BYTES);
    rowStarts[i] = rows.length;
    rows.row(10);
    rows.bytes(o.traceId);
    rows.bytes(o.spanId);
    if (o.parentSpanId) rows.bytes(o.parentSpanId);
    else rows.null();
    idAt[i] = rows.length + 4;
    rows.int8(0);
    rows.int8(0);
    rows.timestampMs(o.startMs);
    rows.float8(o.durationUs);
    rows.int2(o.kind);
    const attrs = exemplar ? keptAttributes(o.attrs) : null;
    if (attrs === null) rows.null();
    else rows.jsonb(attrs);
    rows.reserve(5);
    rows.bool(exemplar);
  }
  rowStarts[n] = rows.length;
  return {
    ok: true,
    rejected: norm.rejected,
    reasons: norm.reasons,
    rows: rows.view(),
    rowCount: n,
    rowStarts,
    idAt,
    rowGroup,
    groups,
    groupKeys,
    days: [...days],
    minStartMs,
    rowMinuteMs,
    rowDurationUs,
    instanceId: sharedInstanceId(req as never),
  };
}

const TWO32 = 4294967296;

function putInt8(buf: Buffer, at: number, v: number): void {
  const hi = Math.floor(v / TWO32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(v - hi * TWO32, at + 4);
}

/**
 * The rows with their ids filled in: `ids[g]` is [series id, resource id] of
 * group g, or null when the group's spans are dropped (cardinality limit).
 * Returns the rows to write and how many they are.
 */
export function fillIds(
  d: DecodedTraces,
  ids: Array<readonly [number, number] | null>,
): { rows: Buffer; count: number } {
  const src = Buffer.from(d.rows.buffer, d.rows.byteOffset, d.rows.byteLength);
  if (ids.every((x) => x !== null)) {
    for (let i = 0; i < d.rowCount; i++) {
      const [s, r] = ids[d.rowGroup[i]!]!;
      putInt8(src, d.idAt[i]!, s);
      putInt8(src, d.idAt[i]! + 12, r);
    }
    return { rows: src, count: d.rowCount };
  }
  // Some groups dropped: copy the kept rows into a new buffer.
  let bytes = 0;
  for (let i = 0; i < d.rowCount; i++)
    if (ids[d.rowGroup[i]!]) bytes += d.rowStarts[i + 1]! - d.rowStarts[i]!;
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  let count = 0;
  for (let i = 0; i < d.rowCount; i++) {
    const id = ids[d.rowGroup[i]!];
    if (!id) continue;
    const start = d.rowStarts[i]!;
    src.copy(out, at, start, d.rowStarts[i + 1]!);
    putInt8(out, at + d.idAt[i]! - start, id[0]);
    putInt8(out, at + d.idAt[i]! - start + 12, id[1]);
    at += d.rowStarts[i + 1]! - start;
    count++;
  }
  return { rows: out, count };
}
