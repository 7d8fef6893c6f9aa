import {
  resourceLabels,
  templateName,
  type Attributes,
  type ResourceLabels,
  type SeriesLabels,
} from '@onset/core';
import { isOneOf, OPS, type Op, type View } from '@onset/contract';
import {
  attributes,
  int64ToNumber,
  nanosToMs,
  type Int64Like,
  type KeyValueLike,
} from './values.ts';
import { ZERO_BUCKET, type NativeHistogram } from './native-histogram.ts';
import { cleanText, MAX_KEY_CHARS, textDigest } from '../text/sanitize.ts';

/**
 * Most observations one data point may carry: far above any real export
 * interval, low enough that counts stay exact doubles and fit the int4
 * bucket counts of a histogram row. More is refused (2^64-1 is a bug).
 */
export const MAX_POINT_COUNT = 1_000_000_000;
/** Exponential bucket indices stay in int4 (histogram rows store them so). */
const MAX_BUCKET_INDEX = 2 ** 31 - 2;

/** One latency histogram data point in its own buckets (placed as µs observations when stored). */
export interface MetricPoint {
  /** sha256 of the stream's identity (service, host, instance, metric, attributes): a fixed-size primary key. */
  streamKey: string;
  cumulative: boolean;
  startMs: number;
  timeMs: number;
  series: SeriesLabels;
  resource: ResourceLabels;
  native: NativeHistogram;
  /** Metric unit to microseconds. */
  toUs: number;
  /**
   * The point names no route or operation (`http.client.request.duration` by method and server):
   * it stands for all its service's calls of its view, not for one series' (store-metrics.ts).
   */
  wholeView: boolean;
}

export interface NormalizedMetrics {
  points: MetricPoint[];
  rejected: number;
  reasons: string[];
  /** Non-latency metrics Onset does not store (not an error). */
  ignored: number;
}

const UNIT_TO_US: Record<string, number> = { s: 1e6, ms: 1e3, us: 1, µs: 1, ns: 1e-3, min: 6e7 };

/** Latency metrics are those with a time unit, or conventional duration names (seconds per semconv). */
function latencyScale(name: string, unit: string | undefined): number | null {
  if (unit && Object.hasOwn(UNIT_TO_US, unit)) return UNIT_TO_US[unit]!;
  if (!unit && /(duration|latency)/i.test(name)) {
    if (/(_ms|\.ms|milliseconds)$/i.test(name)) return 1e3;
    if (/(_us|microseconds)$/i.test(name)) return 1;
    return 1e6;
  }
  return null;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/**
 * The old conventions' server metrics name their route in `http.target` (Python's Flask
 * instrumentation: `http.server.duration` with `http.target` `/checkout/<item>` and no
 * `http.route`), so the point is matched to the spans' series of that route rather than
 * standing for the whole view. A target with a query is a concrete request, not a route.
 */
function serverTarget(attrs: Attributes): string | undefined {
  const target = str(attrs['http.target']);
  return target && target.startsWith('/') && !/[?#]/.test(target) ? target : undefined;
}

function metricLabels(
  metricName: string,
  attrs: Attributes,
  resource: ResourceLabels,
): SeriesLabels {
  const lower = metricName.toLowerCase();
  const explicitOp = str(attrs['onset.op']);
  const method = str(attrs['http.request.method']) ?? str(attrs['http.method']);
  let op: Op = 'other';
  if (isOneOf(OPS, explicitOp)) op = explicitOp;
  else if (lower.includes('spawn')) op = 'spawn';
  else if (lower.includes('fsync')) op = 'fsync';
  else if (lower.includes('unmount') || lower.includes('umount')) op = 'unmount';
  else if (lower.startsWith('http.') || lower.startsWith('rpc.') || method) op = 'request';
  let view: View = 'internal';
  const explicitView = str(attrs['onset.view']);
  if (explicitView === 'server' || explicitView === 'client' || explicitView === 'internal')
    view = explicitView;
  else if (/\.server\./.test(lower)) view = 'server';
  else if (/\.client\./.test(lower)) view = 'client';
  // A declared http.route is used as written (as for spans, core classify.ts); a target is templated.
  const route = str(attrs['http.route']);
  const target = route === undefined && view === 'server' ? serverTarget(attrs) : undefined;
  const name =
    op !== 'request' || !method
      ? metricName
      : route
        ? `${method.toUpperCase()} ${route}`
        : target
          ? templateName(`${method.toUpperCase()} ${target}`)
          : metricName;
  const peer =
    view === 'client' ? (str(attrs['peer.service']) ?? str(attrs['server.address']) ?? '') : '';
  return {
    service: resource.service,
    op,
    view,
    name: name.slice(0, 256),
    peer: peer.slice(0, 256),
  };
}

interface PointLike {
  attributes?: KeyValueLike[] | null;
  startTimeUnixNano?: Int64Like;
  timeUnixNano?: Int64Like;
  count?: Int64Like;
  sum?: number | string | null;
  min?: number | string | null;
  max?: number | string | null;
  bucketCounts?: Int64Like[] | null;
  explicitBounds?: Array<number | string> | null;
  scale?: number | null;
  zeroCount?: Int64Like;
  positive?: { offset?: number | null; bucketCounts?: Int64Like[] | null } | null;
}
interface MetricLike {
  name?: string;
  unit?: string | null;
  histogram?: {
    dataPoints?: PointLike[] | null;
    aggregationTemporality?: number | string | null;
  } | null;
  exponentialHistogram?: {
    dataPoints?: PointLike[] | null;
    aggregationTemporality?: number | string | null;
  } | null;
}
interface MetricsLike {
  resourceMetrics?: Array<{
    resource?: { attributes?: KeyValueLike[] | null } | null;
    scopeMetrics?: Array<{ metrics?: MetricLike[] | null }> | null;
  }> | null;
}

function isCumulative(t: number | string | null | undefined): boolean {
  return t === 2 || t === 'AGGREGATION_TEMPORALITY_CUMULATIVE';
}

function optionalDouble(v: number | string | null | undefined): number | undefined {
  if (v === null || v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Bucket counts as numbers, or why they are refused (negative, fractional, absurdly large). */
function readCounts(raw: unknown, total = 0): number[] | string {
  const counts = (Array.isArray(raw) ? raw : []).map((c) => int64ToNumber(c as Int64Like));
  for (const c of counts) {
    if (!Number.isInteger(c) || c < 0) return 'bucket counts must be non-negative integers';
    total += c;
  }
  if (total > MAX_POINT_COUNT) return `data point counts more than ${MAX_POINT_COUNT} observations`;
  return counts;
}

function explicitToNative(p: PointLike): NativeHistogram | string {
  const bounds = (Array.isArray(p.explicitBounds) ? p.explicitBounds : []).map(Number);
  const counts = readCounts(p.bucketCounts);
  if (typeof counts === 'string') return counts;
  if (counts.length !== bounds.length + 1 && !(counts.length === 0 && bounds.length === 0))
    return 'bucketCounts must have one more entry than explicitBounds';
  if (bounds.some((b, k) => !Number.isFinite(b) || (k > 0 && b <= bounds[k - 1]!)))
    return 'explicitBounds must be finite and increasing';
  const idx: number[] = [];
  const cnt: number[] = [];
  counts.forEach((c, k) => {
    if (c > 0) {
      idx.push(k);
      cnt.push(c);
    }
  });
  return {
    layout: `explicit:${bounds.join(',')}`,
    kind: 'explicit',
    bounds,
    scale: 0,
    idx,
    cnt,
    sum: optionalDouble(p.sum) ?? NaN,
    min: optionalDouble(p.min),
    max: optionalDouble(p.max),
  };
}

function exponentialToNative(p: PointLike): NativeHistogram | string {
  const scale = p.scale ?? 0;
  if (!Number.isInteger(scale) || scale < -10 || scale > 20)
    return 'exponential histogram scale must be an integer in [-10, 20]';
  const idx: number[] = [];
  const cnt: number[] = [];
  const zeroCounts = readCounts([p.zeroCount ?? 0]);
  if (typeof zeroCounts === 'string') return zeroCounts;
  const zero = zeroCounts[0]!;
  if (zero > 0) {
    idx.push(ZERO_BUCKET);
    cnt.push(zero);
  }
  const counts = readCounts(p.positive?.bucketCounts, zero);
  if (typeof counts === 'string') return counts;
  const offset = p.positive?.offset ?? 0;
  if (
    !Number.isInteger(offset) ||
    Math.abs(offset) > MAX_BUCKET_INDEX ||
    Math.abs(offset + counts.length) > MAX_BUCKET_INDEX
  )
    return 'exponential bucket offset out of range';
  counts.forEach((n, k) => {
    if (n > 0) {
      idx.push(offset + k);
      cnt.push(n);
    }
  });
  return {
    layout: 'exponential',
    kind: 'exponential',
    bounds: [],
    scale,
    idx,
    cnt,
    sum: optionalDouble(p.sum) ?? NaN,
    min: optionalDouble(p.min),
    max: optionalDouble(p.max),
  };
}

/** A repeated field as an array (a protobuf absent field or a JSON null reads as empty). */
function list<T>(v: T[] | null | undefined): T[] {
  return Array.isArray(v) ? v : [];
}

/** Distinct refusal reasons reported in one response (the count covers them all). */
const MAX_REASONS = 8;

/** One histogram data point, or why it is refused. */
function readPoint(
  p: PointLike,
  m: MetricLike,
  name: string,
  resAttrs: Attributes,
  resource: ResourceLabels,
  toUs: number,
  cumulative: boolean,
  limits: MetricLimits,
): MetricPoint | string {
  const timeMs = nanosToMs(p.timeUnixNano);
  if (!(timeMs > 0)) return 'data point without timeUnixNano';
  if (timeMs < limits.oldestMs || timeMs > limits.newestMs)
    return 'data point outside the accepted time range';
  const startMs = nanosToMs(p.startTimeUnixNano);
  if (!(startMs >= 0 && startMs <= timeMs))
    return 'data point startTimeUnixNano must be between 0 and timeUnixNano';
  const attrCount = list(p.attributes).length;
  if (attrCount > limits.maxAttributes)
    return `data point has ${attrCount} attributes (limit ${limits.maxAttributes})`;
  const count = int64ToNumber(p.count);
  if (!(count >= 0 && count <= MAX_POINT_COUNT))
    return `data point count must be between 0 and ${MAX_POINT_COUNT}`;
  const native = m.histogram ? explicitToNative(p) : exponentialToNative(p);
  if (typeof native === 'string') return native;
  const overflows = (x: number | undefined) =>
    x !== undefined && Number.isFinite(x) && !Number.isFinite(x * toUs);
  if ([native.sum, native.min, native.max, ...native.bounds].some(overflows))
    return 'data point values out of range';
  const attrs = attributes(p.attributes);
  const series = metricLabels(name, attrs, resource);
  return {
    streamKey: textDigest(
      JSON.stringify([
        resAttrs['service.name'],
        resAttrs['host.name'],
        resAttrs['service.instance.id'],
        name,
        attrs,
      ]),
    ),
    cumulative,
    startMs,
    timeMs,
    series,
    resource,
    native,
    toUs,
    wholeView: series.op === 'request' && series.view !== 'internal' && series.name === name,
  };
}

export interface MetricLimits {
  oldestMs: number;
  newestMs: number;
  /** Most attributes on a data point or a resource. */
  maxAttributes: number;
}

/**
 * Turn a decoded ExportMetricsServiceRequest into latency histogram points,
 * refusing bad data points one by one (OTLP partial success): text is cleaned
 * (sanitize.ts), counts, times and bucket indices out of range refuse the point.
 */
export function normalizeMetrics(req: MetricsLike, limits: MetricLimits): NormalizedMetrics {
  const points: MetricPoint[] = [];
  const reasons = new Set<string>();
  let rejected = 0;
  let ignored = 0;
  const reject = (why: string) => {
    rejected++;
    if (reasons.size < MAX_REASONS) reasons.add(why);
  };
  for (const rm of list(req.resourceMetrics)) {
    const metrics = list(rm?.scopeMetrics).flatMap((sm) => list(sm?.metrics).filter((m) => m));
    const resAttrCount = list(rm?.resource?.attributes).length;
    const resAttrs = attributes(rm?.resource?.attributes);
    const resource = resourceLabels(resAttrs);
    for (const m of metrics) {
      const name = typeof m.name === 'string' ? cleanText(m.name, MAX_KEY_CHARS) : '';
      const hist = m.histogram ?? m.exponentialHistogram;
      const scale = latencyScale(name, typeof m.unit === 'string' ? m.unit : undefined);
      if (!hist || scale === null) {
        ignored += hist?.dataPoints?.length ?? 1;
        continue;
      }
      const cumulative = isCumulative(hist.aggregationTemporality);
      for (const p of list(hist.dataPoints)) {
        let result: MetricPoint | string;
        if (resAttrCount > limits.maxAttributes)
          result = `resource has ${resAttrCount} attributes (limit ${limits.maxAttributes})`;
        else
          try {
            result = p
              ? readPoint(p, m, name, resAttrs, resource, scale, cumulative, limits)
              : 'empty data point';
          } catch (err) {
            // Last line of defence: a point the checks did not foresee is refused alone, never the batch.
            result = `unreadable data point (${(err as Error).message})`;
          }
        if (typeof result === 'string') reject(result);
        else points.push(result);
      }
    }
  }
  return { points, rejected, reasons: [...reasons], ignored };
}
