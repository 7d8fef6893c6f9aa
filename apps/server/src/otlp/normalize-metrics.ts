import {
  resourceLabels,
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

/** One latency histogram data point in its own buckets (placed as µs observations when stored). */
export interface MetricPoint {
  streamKey: string;
  cumulative: boolean;
  startMs: number;
  timeMs: number;
  series: SeriesLabels;
  resource: ResourceLabels;
  native: NativeHistogram;
  /** Metric unit to microseconds. */
  toUs: number;
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
  if (unit && UNIT_TO_US[unit] !== undefined) return UNIT_TO_US[unit]!;
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
  const route = str(attrs['http.route']);
  const name =
    op === 'request' && method && route ? `${method.toUpperCase()} ${route}` : metricName;
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

function explicitToNative(p: PointLike): NativeHistogram | string {
  const bounds = (p.explicitBounds ?? []).map(Number);
  const counts = (p.bucketCounts ?? []).map(int64ToNumber);
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
  const zero = int64ToNumber(p.zeroCount);
  if (zero > 0) {
    idx.push(ZERO_BUCKET);
    cnt.push(zero);
  }
  const offset = p.positive?.offset ?? 0;
  (p.positive?.bucketCounts ?? []).forEach((c, k) => {
    const n = int64ToNumber(c);
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

export function normalizeMetrics(
  req: MetricsLike,
  limits: { oldestMs: number; newestMs: number },
): NormalizedMetrics {
  const points: MetricPoint[] = [];
  const reasons = new Set<string>();
  let rejected = 0;
  let ignored = 0;
  for (const rm of req.resourceMetrics ?? []) {
    const resAttrs = attributes(rm?.resource?.attributes);
    const resource = resourceLabels(resAttrs);
    for (const sm of rm?.scopeMetrics ?? []) {
      for (const m of sm?.metrics ?? []) {
        if (!m) continue;
        const name = m.name ?? '';
        const hist = m.histogram ?? m.exponentialHistogram;
        const scale = latencyScale(name, m.unit ?? undefined);
        if (!hist || scale === null) {
          ignored += hist?.dataPoints?.length ?? 1;
          continue;
        }
        const cumulative = isCumulative(hist.aggregationTemporality);
        for (const p of hist.dataPoints ?? []) {
          const timeMs = nanosToMs(p.timeUnixNano);
          if (!(timeMs > 0)) {
            rejected++;
            reasons.add('data point without timeUnixNano');
            continue;
          }
          if (timeMs < limits.oldestMs || timeMs > limits.newestMs) {
            rejected++;
            reasons.add('data point outside the accepted time range');
            continue;
          }
          const native = m.histogram ? explicitToNative(p) : exponentialToNative(p);
          if (typeof native === 'string') {
            rejected++;
            reasons.add(native);
            continue;
          }
          const attrs = attributes(p.attributes);
          const series = metricLabels(name, attrs, resource);
          const streamKey = JSON.stringify([
            resAttrs['service.name'],
            resAttrs['host.name'],
            resAttrs['service.instance.id'],
            name,
            attrs,
          ]);
          points.push({
            streamKey,
            cumulative,
            startMs: nanosToMs(p.startTimeUnixNano),
            timeMs,
            series,
            resource,
            native,
            toUs: scale,
          });
        }
      }
    }
  }
  return { points, rejected, reasons: [...reasons], ignored };
}
