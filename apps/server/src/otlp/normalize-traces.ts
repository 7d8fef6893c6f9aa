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
import { cleanText, cutAt, MAX_KEY_CHARS } from '../text/sanitize.ts';

/**
 * How far in the future a span may start (sender clock skew). Also why a span
 * starting later than this after midnight cannot be a retry of one received
 * the day before (write-spans.ts).
 */
export const FUTURE_SLACK_MS = 3_600_000;

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
  /** The span's attributes; an exemplar keeps their scalar ones (keptAttributes) for evidence. */
  attrs: Attributes;
}

const MAX_KEPT_ATTRS = 64;
const MAX_KEPT_STRING = 256;

/**
 * The span's scalar attributes as JSON (strings cut to 256 chars, at most 64
 * keys): what evidence compares. Built only for exemplars (exemplars.ts).
 */
export function keptAttributes(attrs: Attributes): string | null {
  // Written as text, not through an object per exemplar (most spans of a cold start are one).
  let json = '';
  let n = 0;
  for (const k of Object.keys(attrs)) {
    if (n >= MAX_KEPT_ATTRS) break;
    const v = attrs[k];
    let text: string;
    if (typeof v === 'string') text = JSON.stringify(cutAt(v, MAX_KEPT_STRING));
    else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean')
      text = String(v);
    else continue;
    n++;
    if (k === '__proto__') continue; // an object literal's assignment would drop it too
    json += `${json ? ',' : '{'}${JSON.stringify(k)}:${text}`;
  }
  return n ? (json ? `${json}}` : '{}') : null;
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

const KIND_NAMES = new Map<string, number>([
  ['SPAN_KIND_UNSPECIFIED', 0],
  ['SPAN_KIND_INTERNAL', 1],
  ['SPAN_KIND_SERVER', 2],
  ['SPAN_KIND_CLIENT', 3],
  ['SPAN_KIND_PRODUCER', 4],
  ['SPAN_KIND_CONSUMER', 5],
]);

/** The SpanKind number, or null when it is not one (the span is refused: its view would be a guess). */
function spanKind(k: unknown): number | null {
  if (k === undefined || k === null) return 0;
  if (typeof k === 'number') return Number.isInteger(k) && k >= 0 && k <= 5 ? k : null;
  if (typeof k === 'string') return KIND_NAMES.get(k) ?? null;
  return null;
}

/** Distinct refusal reasons reported in one response (the count covers them all). */
export const MAX_REASONS = 8;

const describeKind = (k: unknown) =>
  typeof k === 'string' ? JSON.stringify(cleanText(k, 40)) : String(k);

/** A repeated field as an array (a protobuf absent field or a JSON null reads as empty). */
function list<T>(v: T[] | null | undefined): T[] {
  return Array.isArray(v) ? v : [];
}

/** One span as an observation, or why it is refused. */
function observe(
  span: SpanLike,
  resource: ResourceLabels,
  limits: SpanLimits,
): Observation | string {
  const traceId = idBytes(span.traceId, 16);
  if (!traceId) return 'invalid trace id (want 16 non-zero bytes)';
  const spanId = idBytes(span.spanId, 8);
  if (!spanId) return 'invalid span id (want 8 non-zero bytes)';
  const parent = parentIdBytes(span.parentSpanId);
  if (parent === 'invalid') return 'invalid parent span id (want 8 bytes or empty)';
  const attrCount = list(span.attributes).length;
  if (attrCount > limits.maxAttributes)
    return `span has ${attrCount} attributes (limit ${limits.maxAttributes})`;
  const kind = spanKind(span.kind);
  if (kind === null) return `span kind ${describeKind(span.kind)} is not a SpanKind (0-5)`;
  const startMs = nanosToMs(span.startTimeUnixNano);
  const durationUs = diffNanosToUs(span.startTimeUnixNano, span.endTimeUnixNano);
  if (!Number.isFinite(durationUs) || !Number.isFinite(startMs) || startMs <= 0)
    return 'missing or unreadable start/end time';
  if (durationUs < 0) return 'span ends before it starts';
  if (durationUs / 1000 > limits.maxDurationMs)
    return `span duration ${(durationUs / 3.6e9).toFixed(1)} h exceeds the ${limits.maxDurationMs / 3.6e6} h limit`;
  if (startMs < limits.oldestMs) return 'span starts before the histogram retention window';
  if (startMs > limits.newestMs)
    return 'span starts more than 1 h in the future (check the sender clock)';
  const name =
    typeof span.name === 'string' && span.name.length > 0
      ? cleanText(span.name, MAX_KEY_CHARS)
      : 'unnamed';
  const spanAttrs = attributes(span.attributes);
  return {
    traceId,
    spanId,
    parentSpanId: parent,
    kind,
    startMs,
    durationUs,
    series: classifySpan({ name, kind, attributes: spanAttrs }, resource),
    resource,
    attrs: spanAttrs,
  };
}

/**
 * Turn a decoded ExportTraceServiceRequest (protobuf or JSON) into
 * observations, refusing bad spans one by one (OTLP partial success): text is
 * cleaned (sanitize.ts), numbers and enums out of range refuse the span.
 */
export function normalizeTraces(req: TracesLike, limits: SpanLimits): NormalizedTraces {
  const observations: Observation[] = [];
  const reasons = new Set<string>();
  let rejected = 0;
  const reject = (why: string) => {
    rejected++;
    if (reasons.size < MAX_REASONS) reasons.add(why);
  };
  for (const rs of list(req.resourceSpans)) {
    const spans = list(rs?.scopeSpans).flatMap((ss) => list(ss?.spans).filter((s) => s));
    const resAttrCount = list(rs?.resource?.attributes).length;
    if (resAttrCount > limits.maxAttributes) {
      for (let i = 0; i < spans.length; i++)
        reject(`resource has ${resAttrCount} attributes (limit ${limits.maxAttributes})`);
      continue;
    }
    const resource = resourceLabels(attributes(rs?.resource?.attributes));
    for (const span of spans) {
      let result: Observation | string;
      try {
        result = observe(span, resource, limits);
      } catch (err) {
        // Last line of defence: a span the checks did not foresee is refused alone, never the batch.
        result = `unreadable span (${(err as Error).message})`;
      }
      if (typeof result === 'string') reject(result);
      else observations.push(result);
    }
  }
  return { observations, rejected, reasons: [...reasons] };
}
