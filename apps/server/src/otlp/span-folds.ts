/**
 * What an export adds to `histograms` and `span_durations`: one histogram row
 * per (series, resource, start minute) and one sorted list of durations per
 * (series, start minute). When every span of a transaction is new
 * (write-spans.ts, the direct path) these rows are written as they are, so
 * PostgreSQL neither stages the spans a second time nor aggregates them (that
 * was about a quarter of its work per span).
 *
 * A realistic export falls on nearly as many (series, resource, minute)s as it
 * has spans, so an export is not folded on its own: decoding keeps each span's
 * group, minute and duration in typed arrays (a SpanBatch: no object per span
 * or per fold, and cheap to pass between threads), and a FoldSum of one
 * transaction's batches (or of a second's, fold-journal.ts) groups them all at
 * once when its rows are written.
 */
import { bucketIndex } from '@onset/core';
import { CopyRows } from './copy-rows.ts';

/** The spans of one export as histograms and durations need them. */
export interface SpanBatch {
  /** Per group (DecodedTraces.groups): [series id, resource id], or null when its spans are dropped. */
  ids: ReadonlyArray<readonly [number, number] | null>;
  /** Per span: its group, */
  group: Int32Array;
  /** the minute it starts in as stored (ms since the epoch), */
  minuteMs: Float64Array;
  /** and its duration (µs). */
  durationUs: Float64Array;
}

/** Spans of a batch whose group is kept. */
function keptSpans(b: SpanBatch): number {
  if (b.ids.every((id) => id !== null)) return b.group.length;
  let n = 0;
  for (let i = 0; i < b.group.length; i++) if (b.ids[b.group[i]!]) n++;
  return n;
}

/**
 * Index by series, resource and minute: numbers all the way down, no key string per span.
 * `minutes` hands out the innermost map, looked up once per (batch, group).
 */
class MinuteIndex {
  private readonly bySeries = new Map<number, Map<number, Map<number, number>>>();

  minutes(seriesId: number, resourceId: number): Map<number, number> {
    let r = this.bySeries.get(seriesId);
    if (!r) this.bySeries.set(seriesId, (r = new Map()));
    let m = r.get(resourceId);
    if (!m) r.set(resourceId, (m = new Map()));
    return m;
  }
}

/**
 * Spans grouped by key: key k's durations are `durations[start[k] .. start[k + 1])`,
 * ascending.
 */
interface Grouped {
  seriesId: number[];
  resourceId: number[];
  minuteMs: number[];
  start: Int32Array;
  durations: Float64Array;
}

/** The kept spans of `batches` grouped by (series, resource, minute). */
function group(batches: readonly SpanBatch[], spans: number): Grouped {
  const index = new MinuteIndex();
  const seriesId: number[] = [];
  const resourceId: number[] = [];
  const minuteMs: number[] = [];
  const sizes: number[] = [];
  // Each span's key, in batch order (-1: its group is dropped).
  const keyOf = new Int32Array(batches.reduce((n, b) => n + b.group.length, 0));
  let k = 0;
  for (const b of batches) {
    const maps: Array<Map<number, number> | null | undefined> = new Array(b.ids.length);
    for (let i = 0; i < b.group.length; i++, k++) {
      const g = b.group[i]!;
      let m = maps[g];
      const id = b.ids[g];
      if (m === undefined) m = maps[g] = id ? index.minutes(id[0], id[1]) : null;
      if (m === null) {
        keyOf[k] = -1;
        continue;
      }
      const minute = b.minuteMs[i]!;
      let key = m.get(minute);
      if (key === undefined) {
        key = sizes.length;
        m.set(minute, key);
        seriesId.push(id![0]);
        resourceId.push(id![1]);
        minuteMs.push(minute);
        sizes.push(0);
      }
      sizes[key]!++;
      keyOf[k] = key;
    }
  }
  const start = new Int32Array(sizes.length + 1);
  for (let j = 0; j < sizes.length; j++) start[j + 1] = start[j]! + sizes[j]!;
  const fill = start.slice(0, sizes.length);
  const durations = new Float64Array(spans);
  k = 0;
  for (const b of batches)
    for (let i = 0; i < b.group.length; i++, k++) {
      const key = keyOf[k]!;
      if (key >= 0) durations[fill[key]!++] = b.durationUs[i]!;
    }
  // A typed array sorts numerically without calling a comparator per comparison.
  for (let j = 0; j < sizes.length; j++)
    if (sizes[j]! > 1) durations.subarray(start[j]!, start[j + 1]!).sort();
  return { seriesId, resourceId, minuteMs, start, durations };
}

/**
 * The (series, minute)s of grouped keys (span_durations has no resource): the keys of
 * (series, minute) j are `keys[at[j] .. at[j + 1])`.
 */
function bySeriesMinute(g: Grouped): { at: Int32Array; keys: Int32Array } {
  const index = new MinuteIndex();
  const n = g.seriesId.length;
  const of = new Int32Array(n);
  const sizes: number[] = [];
  for (let k = 0; k < n; k++) {
    const m = index.minutes(g.seriesId[k]!, 0);
    let j = m.get(g.minuteMs[k]!);
    if (j === undefined) {
      j = sizes.length;
      m.set(g.minuteMs[k]!, j);
      sizes.push(0);
    }
    sizes[j]!++;
    of[k] = j;
  }
  const at = new Int32Array(sizes.length + 1);
  for (let j = 0; j < sizes.length; j++) at[j + 1] = at[j]! + sizes[j]!;
  const fill = at.slice(0, sizes.length);
  const keys = new Int32Array(n);
  for (let k = 0; k < n; k++) keys[fill[of[k]!]!++] = k;
  return { at, keys };
}

const INT4_OID = 23;
const FLOAT8_OID = 701;
/** PostgreSQL dates count days from 2000-01-01. */
const PG_EPOCH_DAY = 10_957;

/** A one-dimensional array value of `values[from .. to)`. */
function array(
  rows: CopyRows,
  oid: number,
  size: 4 | 8,
  values: ArrayLike<number>,
  from = 0,
  to = values.length,
): void {
  const n = to - from;
  const bytes = 20 + n * (4 + size);
  rows.reserve(4 + bytes);
  const buf = rows.buf;
  let at = buf.writeInt32BE(bytes, rows.length);
  at = buf.writeInt32BE(1, at); // dimensions
  at = buf.writeInt32BE(0, at); // no nulls
  at = buf.writeInt32BE(oid, at);
  at = buf.writeInt32BE(n, at);
  at = buf.writeInt32BE(1, at); // lower bound
  for (let i = from; i < to; i++) {
    at = buf.writeInt32BE(size, at);
    at = size === 4 ? buf.writeInt32BE(values[i]!, at) : buf.writeDoubleBE(values[i]!, at);
  }
  rows.length = at;
}

/** Where FoldSum.histogramRows go. */
export const HISTOGRAM_COPY_TARGET =
  'histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)';

/** Where FoldSum.durationRows go with their received day. */
export const DURATIONS_COPY_TARGET =
  'span_durations (received_day, series_id, minute, durations, sorted)';

/** Bucket indices and counts of one key, reused from key to key. */
let bucketIdx = new Int32Array(256);
let bucketCnt = new Int32Array(256);

/** Room for twice as many buckets (a key's distinct buckets, not its spans, fill them). */
function growBuckets(): void {
  const idx = new Int32Array(2 * bucketIdx.length);
  const cnt = new Int32Array(2 * bucketCnt.length);
  idx.set(bucketIdx);
  cnt.set(bucketCnt);
  bucketIdx = idx;
  bucketCnt = cnt;
}

/**
 * The spans of several exports (one transaction's, or the transactions of one fold), grouped
 * only when rows are asked for: adding is keeping a reference.
 */
export class FoldSum {
  private readonly batches: SpanBatch[] = [];
  /** Kept spans held. */
  spans = 0;
  /** Spans whose arrays are held, dropped ones included (what the memory cap counts). */
  held = 0;

  static of(batches: readonly SpanBatch[]): FoldSum {
    const sum = new FoldSum();
    for (const b of batches) sum.add(b);
    return sum;
  }

  add(b: SpanBatch): this {
    this.batches.push(b);
    this.spans += keptSpans(b);
    this.held += b.group.length;
    return this;
  }

  /** Another sum's spans added to this one. */
  addSum(other: FoldSum): void {
    // A loop: a spread of many batches would pass each as an argument.
    for (const b of other.batches) this.batches.push(b);
    this.spans += other.spans;
    this.held += other.held;
  }

  /**
   * The COPY rows of these spans: for HISTOGRAM_COPY_TARGET, one per (series, resource,
   * minute), with count, sum, min, max and the sparse buckets (what Histogram.record of each
   * duration would give); and one per (series, minute) (span_durations has no resource), each
   * array sorted ascending so SLO counting finds a threshold's good events by binary search:
   * for DURATIONS_COPY_TARGET received on `day`, or without it (null) for a journal row
   * (fold-journal.ts), whose durations take the day of the transaction that applies them.
   */
  rows(day: string | null): { histograms: Buffer; durations: Buffer } {
    const g = group(this.batches, this.spans);
    return {
      histograms: histogramRows(g, this.spans),
      durations: durationRows(g, this.spans, day),
    };
  }
}

function histogramRows(g: Grouped, spans: number): Buffer {
  const keys = g.seriesId.length;
  const rows = new CopyRows(keys * 128 + spans * 8 + 16);
  const d = g.durations;
  for (let k = 0; k < keys; k++) {
    const from = g.start[k]!;
    const to = g.start[k + 1]!;
    // The bucket index grows with the duration: equal ones are neighbours.
    let buckets = 0;
    let last = NaN;
    let sum = 0;
    for (let i = from; i < to; i++) {
      sum += d[i]!;
      const b = bucketIndex(d[i]!);
      if (b === last) bucketCnt[buckets - 1]!++;
      else {
        if (buckets === bucketIdx.length) growBuckets();
        bucketIdx[buckets] = b;
        bucketCnt[buckets++] = 1;
        last = b;
      }
    }
    rows.reserve(2 + 7 * 12);
    rows.row(9);
    rows.int8(g.seriesId[k]!);
    rows.int8(g.resourceId[k]!);
    rows.timestampMs(g.minuteMs[k]!);
    rows.int8(to - from);
    rows.float8(sum);
    rows.float8(d[from]!);
    rows.float8(d[to - 1]!);
    array(rows, INT4_OID, 4, bucketIdx, 0, buckets);
    array(rows, INT4_OID, 4, bucketCnt, 0, buckets);
  }
  return Buffer.from(rows.view());
}

function durationRows(g: Grouped, spans: number, day: string | null): Buffer {
  const { at, keys } = bySeriesMinute(g);
  const dayNumber = day === null ? 0 : Date.parse(`${day}T00:00:00Z`) / 86_400_000 - PG_EPOCH_DAY;
  const rows = new CopyRows((at.length - 1) * 72 + spans * 12 + 16);
  for (let j = 0; j + 1 < at.length; j++) {
    const first = keys[at[j]!]!;
    rows.reserve(2 + 8 + 12 + 12);
    if (day === null) rows.row(4);
    else {
      rows.row(5);
      rows.length = rows.buf.writeInt32BE(4, rows.length);
      rows.length = rows.buf.writeInt32BE(dayNumber, rows.length);
    }
    rows.int8(g.seriesId[first]!);
    rows.timestampMs(g.minuteMs[first]!);
    if (at[j + 1]! - at[j]! === 1)
      array(rows, FLOAT8_OID, 8, g.durations, g.start[first]!, g.start[first + 1]!);
    else {
      // Several resources of the series in this minute: their sorted durations, sorted as one.
      const parts: Float64Array[] = [];
      for (let x = at[j]!; x < at[j + 1]!; x++) {
        const k = keys[x]!;
        parts.push(g.durations.subarray(g.start[k]!, g.start[k + 1]!));
      }
      const all = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
      let o = 0;
      for (const p of parts) {
        all.set(p, o);
        o += p.length;
      }
      array(rows, FLOAT8_OID, 8, all.sort());
    }
    rows.reserve(5);
    rows.bool(true);
  }
  return Buffer.from(rows.view());
}
