/**
 * What an export adds to `histograms` and `span_durations`, folded while it is
 * decoded: one histogram and one list of durations per (group, start minute).
 * When every span of a transaction is new (write-spans.ts, the direct path)
 * these rows are copied as they are, so PostgreSQL neither stages the spans a
 * second time nor aggregates them (that was about a quarter of its work per
 * span). Plain data: it crosses worker threads.
 */
import { bucketIndex, type SparseHistogram } from '@onset/core';
import { CopyRows } from './copy-rows.ts';

/** One (group, minute) of a decoded export: `g` indexes DecodedTraces.groups. */
export interface GroupFold {
  g: number;
  minuteMs: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  idx: number[];
  cnt: number[];
  /** Ascending. */
  durations: Float64Array;
}

/** The same with the group's ids, ready to write. */
export interface SpanFold extends Omit<GroupFold, 'g'> {
  seriesId: number;
  resourceId: number;
}

/**
 * Folds spans as they are decoded. A realistic export touches many (group,
 * minute)s with a few spans each, so a fold keeps only its durations and a
 * running sum: its buckets come from the sorted durations at the end (the
 * bucket index grows with the duration), with no histogram map per fold, and
 * folds are found by number, not by a key string per span.
 */
interface Fold {
  g: number;
  minuteMs: number;
  sum: number;
  d: number[];
}

export class FoldBuilder {
  private readonly list: Fold[] = [];
  /** Each group's folds by minute. */
  private readonly byGroup: Array<Map<number, Fold>> = [];

  add(g: number, minute: number, us: number): void {
    let m = this.byGroup[g];
    if (!m) this.byGroup[g] = m = new Map();
    let f = m.get(minute);
    if (!f) {
      f = { g, minuteMs: minute * 60_000, sum: 0, d: [] };
      m.set(minute, f);
      this.list.push(f);
    }
    f.sum += us;
    f.d.push(us);
  }

  folds(): GroupFold[] {
    return this.list.map(({ g, minuteMs, sum, d }) => {
      // A typed array sorts numerically without calling a comparator per comparison.
      const sorted = Float64Array.from(d).sort();
      return {
        g,
        minuteMs,
        count: sorted.length,
        sum,
        min: sorted[0]!,
        max: sorted[sorted.length - 1]!,
        ...sortedBuckets(sorted),
        durations: sorted,
      };
    });
  }
}

/** The sparse histogram of ascending durations (what Histogram.record of each would give). */
function sortedBuckets(sorted: Float64Array): SparseHistogram {
  const idx: number[] = [];
  const cnt: number[] = [];
  let last = NaN;
  for (const us of sorted) {
    const i = bucketIndex(us);
    if (i === last) cnt[cnt.length - 1]!++;
    else {
      idx.push(i);
      cnt.push(1);
      last = i;
    }
  }
  return { idx, cnt };
}

/** Two sparse histograms added (ascending indices in, ascending out). */
function addSparse(a: SparseHistogram, b: SparseHistogram): SparseHistogram {
  const idx: number[] = [];
  const cnt: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.idx.length || j < b.idx.length) {
    const x = i < a.idx.length ? a.idx[i]! : Infinity;
    const y = j < b.idx.length ? b.idx[j]! : Infinity;
    if (x === y) {
      idx.push(x);
      cnt.push(a.cnt[i++]! + b.cnt[j++]!);
    } else if (x < y) {
      idx.push(x);
      cnt.push(a.cnt[i++]!);
    } else {
      idx.push(y);
      cnt.push(b.cnt[j++]!);
    }
  }
  return { idx, cnt };
}

/** Two ascending arrays as one. */
function mergeSorted(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

/**
 * Index of folds by series, resource and minute: numbers all the way down, no key string per
 * fold (a realistic export has nearly one fold per span).
 */
class FoldIndex<T> {
  private readonly bySeries = new Map<number, Map<number, Map<number, T>>>();

  get(seriesId: number, resourceId: number, minuteMs: number): T | undefined {
    return this.bySeries.get(seriesId)?.get(resourceId)?.get(minuteMs);
  }

  set(seriesId: number, resourceId: number, minuteMs: number, v: T): void {
    let r = this.bySeries.get(seriesId);
    if (!r) this.bySeries.set(seriesId, (r = new Map()));
    let m = r.get(resourceId);
    if (!m) r.set(resourceId, (m = new Map()));
    m.set(minuteMs, v);
  }
}

/** Folds of several exports merged per (series, resource, minute): one histogram row each. */
export function mergeFolds(lists: SpanFold[][]): SpanFold[] {
  if (lists.length === 1) return lists[0]!;
  const index = new FoldIndex<number>();
  const out: SpanFold[] = [];
  for (const list of lists)
    for (const f of list) {
      const at = index.get(f.seriesId, f.resourceId, f.minuteMs);
      if (at === undefined) {
        index.set(f.seriesId, f.resourceId, f.minuteMs, out.length);
        out.push(f);
        continue;
      }
      const m = out[at]!;
      out[at] = {
        ...m,
        count: m.count + f.count,
        sum: m.sum + f.sum,
        min: Math.min(m.min, f.min),
        max: Math.max(m.max, f.max),
        ...addSparse(m, f),
        durations: mergeSorted(m.durations, f.durations),
      };
    }
  return out;
}

const NO_DURATIONS = new Float64Array(0);

/**
 * The histograms of several transactions' folds, summed per (series, resource, minute)
 * (fold-journal.ts; their durations are summed apart, DurationSum). Each key gets one
 * accumulator of its own, added to in place.
 */
export class HistogramSum {
  private readonly index = new FoldIndex<SpanFold>();
  private readonly list: SpanFold[] = [];

  /** (series, resource, minute)s held. */
  get size(): number {
    return this.list.length;
  }

  add(folds: readonly SpanFold[]): void {
    for (const f of folds) {
      const m = this.index.get(f.seriesId, f.resourceId, f.minuteMs);
      if (!m) {
        // A copy of its own, added to in place; a new key is rare next to an added fold.
        const acc: SpanFold = { ...f, durations: NO_DURATIONS };
        this.index.set(f.seriesId, f.resourceId, f.minuteMs, acc);
        this.list.push(acc);
        continue;
      }
      m.count += f.count;
      m.sum += f.sum;
      if (f.min < m.min) m.min = f.min;
      if (f.max > m.max) m.max = f.max;
      const both = addSparse(m, f);
      m.idx = both.idx;
      m.cnt = both.cnt;
    }
  }

  /** Another sum added to this one. */
  addSum(other: HistogramSum): void {
    this.add(other.list);
  }

  /** COPY rows for HISTOGRAM_COPY_TARGET, one per key. */
  rows(): Buffer {
    return histogramRows(this.list);
  }
}
const INT4_OID = 23;
const FLOAT8_OID = 701;
/** PostgreSQL dates count days from 2000-01-01. */
const PG_EPOCH_DAY = 10_957;

function array(rows: CopyRows, oid: number, size: 4 | 8, values: ArrayLike<number>): void {
  const bytes = 20 + values.length * (4 + size);
  rows.reserve(4 + bytes);
  let at = rows.buf.writeInt32BE(bytes, rows.length);
  at = rows.buf.writeInt32BE(1, at); // dimensions
  at = rows.buf.writeInt32BE(0, at); // no nulls
  at = rows.buf.writeInt32BE(oid, at);
  at = rows.buf.writeInt32BE(values.length, at);
  at = rows.buf.writeInt32BE(1, at); // lower bound
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    at = rows.buf.writeInt32BE(size, at);
    at = size === 4 ? rows.buf.writeInt32BE(v, at) : rows.buf.writeDoubleBE(v, at);
  }
  rows.length = at;
}

/** Where histogramRows go. */
export const HISTOGRAM_COPY_TARGET =
  'histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)';

/** COPY rows for HISTOGRAM_COPY_TARGET. */
export function histogramRows(folds: SpanFold[]): Buffer {
  const rows = new CopyRows(folds.length * 128 + 16);
  for (const f of folds) {
    rows.reserve(2 + 7 * 12);
    rows.row(9);
    rows.int8(f.seriesId);
    rows.int8(f.resourceId);
    rows.timestampMs(f.minuteMs);
    rows.int8(f.count);
    rows.float8(f.sum);
    rows.float8(f.min);
    rows.float8(f.max);
    array(rows, INT4_OID, 4, f.idx);
    array(rows, INT4_OID, 4, f.cnt);
  }
  return Buffer.from(rows.view());
}

/** Where DurationSum rows go with their received day. */
export const DURATIONS_COPY_TARGET =
  'span_durations (received_day, series_id, minute, durations, sorted)';

/** The durations of one (series, minute): one fold's ascending array, or several folds' as numbers. */
interface MinuteDurations {
  seriesId: number;
  minuteMs: number;
  /** The only part so far, ascending (a fold's own array: nothing copied). */
  one: Float64Array | null;
  /** Several parts' durations, unsorted. */
  many: number[];
}

function addPart(m: MinuteDurations, part: ArrayLike<number>): void {
  if (m.one === null && m.many.length === 0 && part instanceof Float64Array) {
    m.one = part;
    return;
  }
  if (m.one) {
    for (let i = 0; i < m.one.length; i++) m.many.push(m.one[i]!);
    m.one = null;
  }
  for (let i = 0; i < part.length; i++) m.many.push(part[i]!);
}

/**
 * The durations of many folds, one list per (series, minute) (span_durations has no resource:
 * the folds of a series' resources go into one array), sorted once when written. A minute with
 * one fold keeps that fold's array; one with several, plain numbers (a fold across
 * transactions holds seconds of them, not each fold's array).
 */
export class DurationSum {
  private readonly index = new FoldIndex<MinuteDurations>();
  private readonly list: MinuteDurations[] = [];

  /** Durations held. */
  count = 0;

  private minute(seriesId: number, minuteMs: number): MinuteDurations {
    let m = this.index.get(seriesId, 0, minuteMs);
    if (!m) {
      m = { seriesId, minuteMs, one: null, many: [] };
      this.index.set(seriesId, 0, minuteMs, m);
      this.list.push(m);
    }
    return m;
  }

  add(folds: readonly SpanFold[]): this {
    for (const f of folds) {
      addPart(this.minute(f.seriesId, f.minuteMs), f.durations);
      this.count += f.durations.length;
    }
    return this;
  }

  /** Another sum added to this one (which may take over its lists). */
  addSum(other: DurationSum): void {
    for (const o of other.list) {
      const m = this.index.get(o.seriesId, 0, o.minuteMs);
      if (!m) {
        this.index.set(o.seriesId, 0, o.minuteMs, o);
        this.list.push(o);
        continue;
      }
      if (o.one) addPart(m, o.one);
      if (o.many.length) addPart(m, o.many);
    }
    this.count += other.count;
  }

  /**
   * COPY rows, one per (series, minute), each array sorted ascending so SLO counting finds a
   * threshold's good events by binary search: for DURATIONS_COPY_TARGET received on `day`, or
   * without it (null) for a journal row (fold-journal.ts), whose durations take the day of the
   * transaction that applies them.
   */
  rows(day: string | null): Buffer {
    const dayNumber = day === null ? 0 : Date.parse(`${day}T00:00:00Z`) / 86_400_000 - PG_EPOCH_DAY;
    const rows = new CopyRows(this.list.length * 72 + this.count * 12 + 16);
    for (const m of this.list) {
      rows.reserve(2 + 8 + 12 + 12);
      if (day === null) rows.row(4);
      else {
        rows.row(5);
        rows.length = rows.buf.writeInt32BE(4, rows.length);
        rows.length = rows.buf.writeInt32BE(dayNumber, rows.length);
      }
      rows.int8(m.seriesId);
      rows.timestampMs(m.minuteMs);
      // A typed array sorts numerically without calling a comparator per comparison.
      array(rows, FLOAT8_OID, 8, m.one ?? Float64Array.from(m.many).sort());
      rows.reserve(5);
      rows.bool(true);
    }
    return Buffer.from(rows.view());
  }
}

/** COPY rows for DURATIONS_COPY_TARGET: the durations of one transaction's folds. */
export function durationRows(folds: SpanFold[], day: string): Buffer {
  return new DurationSum().add(folds).rows(day);
}
