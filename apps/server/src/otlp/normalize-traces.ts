import {
  classifySpan,
  resourceLabels,
  type Attributes,
  type ResourceLabels,
  type SeriesLabels,
} from '@onset/core';
import {
  attributes,
  diffNanosToUs,
  idBytes,
  nanosToMs,
  parentIdBytes,
  type Int64Like,
  type KeyValueLike,
} from './values.ts';

export interface SpanLimits {
  maxDurationMs: number;
  maxAttributes: number;
  /** Oldest accepted start (ms since epoch): histogram retention. */
  oldestMs: number;
  /** Newest accepted start (ms since epoch): a little clock skew is fine. */
  newestMs: number;
}

export interface Observation {
  traceId: Buffer;
  spanId: Buffer;
  parentSpanId: Buffer | null;
  kind: number;
  startMs: number;
  durationUs: number;
  series: SeriesLabels;
  resource: ResourceLabels;
  /** Scalar span attributes, kept with the raw span for evidence (attribute lifts, hints); null when none. */
  attrs: string | null;
}

const MAX_KEPT_ATTRS = 64;
const MAX_KEPT_STRING = 256;

/** The span's scalar attributes as JSON (strings cut to 256 chars, at most 64 keys): what evidence compares. */
function keptAttributes(attrs: Attributes): string | null {
  const out: Record<string, string | number | boolean> = {};
  let n = 0;
  for (const [k, v] of Object.entries(attrs)) {
    if (n >= MAX_KEPT_ATTRS) break;
    if (typeof v === 'string')
      out[k] = v.length > MAX_KEPT_STRING ? v.slice(0, MAX_KEPT_STRING) : v;
    else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') out[k] = v;
    else continue;
    n++;
  }
  return n ? JSON.stringify(out) : null;
}

export interface NormalizedTraces {
  observations: Observation[];
  rejected: number;
  /** Distinct reasons, for partialSuccess.errorMessage. */
  reasons: string[];
}

interface SpanLike {
  traceId: unknown;
  spanId: unknown;
  parentSpanId?: unknown;
  name?: string;
  kind?: number | string;
  startTimeUnixNano?: Int64Like;
  endTimeUnixNano?: Int64Like;
  attributes?: KeyValueLike[] | null;
}
interface TracesLike {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValueLike[] | null } | null;
    scopeSpans?: Array<{ spans?: SpanLike[] | null }> | null;
  }> | null;
}

const KIND_NAMES: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};

function spanKind(k: number | string | undefined): number {
  if (typeof k === 'number') return k;
  if (typeof k === 'string') return KIND_NAMES[k] ?? 0;
  return 0;
}

/** Turn a decoded ExportTraceServiceRequest (protobuf or JSON) into observations, refusing bad spans one by one. */
export function normalizeTraces(req: TracesLike, limits: SpanLimits): NormalizedTraces {
  const observations: Observation[] = [];
  const reasons = new Set<string>();
  let rejected = 0;
  const reject = (why: string) => {
    rejected++;
    reasons.add(why);
  };
  for (const rs of req.resourceSpans ?? []) {
    const resAttrs: Attributes = attributes(rs?.resource?.attributes);
    const resource = resourceLabels(resAttrs);
    for (const ss of rs?.scopeSpans ?? []) {
      for (const span of ss?.spans ?? []) {
        if (!span) continue;
        const traceId = idBytes(span.traceId, 16);
        if (!traceId) {
          reject('invalid trace id (want 16 non-zero bytes)');
          continue;
        }
        const spanId = idBytes(span.spanId, 8);
        if (!spanId) {
          reject('invalid span id (want 8 non-zero bytes)');
          continue;
        }
        const parent = parentIdBytes(span.parentSpanId);
        if (parent === 'invalid') {
          reject('invalid parent span id (want 8 bytes or empty)');
          continue;
        }
        const attrCount = span.attributes?.length ?? 0;
        if (attrCount > limits.maxAttributes) {
          reject(`span has ${attrCount} attributes (limit ${limits.maxAttributes})`);
          continue;
        }
        const startMs = nanosToMs(span.startTimeUnixNano);
        const durationUs = diffNanosToUs(span.startTimeUnixNano, span.endTimeUnixNano);
        if (!Number.isFinite(durationUs) || !Number.isFinite(startMs) || startMs <= 0) {
          reject('missing or unreadable start/end time');
          continue;
        }
        if (durationUs < 0) {
          reject('span ends before it starts');
          continue;
        }
        if (durationUs / 1000 > limits.maxDurationMs) {
          reject(
            `span duration ${(durationUs / 3.6e9).toFixed(1)} h exceeds the ${limits.maxDurationMs / 3.6e6} h limit`,
          );
          continue;
        }
        if (startMs < limits.oldestMs) {
          reject('span starts before the histogram retention window');
          continue;
        }
        if (startMs > limits.newestMs) {
          reject('span starts more than 1 h in the future (check the sender clock)');
          continue;
        }
        const name = typeof span.name === 'string' && span.name.length > 0 ? span.name : 'unnamed';
        const kind = spanKind(span.kind);
        const spanAttrs = attributes(span.attributes);
        const series = classifySpan({ name, kind, attributes: spanAttrs }, resource);
        observations.push({
          traceId,
          spanId,
          parentSpanId: parent,
          kind,
          startMs,
          durationUs,
          series,
          resource,
          attrs: keptAttributes(spanAttrs),
        });
      }
    }
  }
  return { observations, rejected, reasons: [...reasons] };
}
