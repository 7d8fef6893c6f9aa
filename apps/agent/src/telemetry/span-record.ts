/**
 * A finished span in a compact form. The agent queues these (not SDK Span
 * objects, which are several times larger) and turns them into the
 * `ReadableSpan`s the official OTLP exporter encodes only when sending.
 */
import {
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type HrTime,
  type SpanContext,
  type SpanStatus,
} from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface SpanRecord {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  /** Unix epoch nanoseconds. */
  startNs: bigint;
  durationNs: number;
  attributes: Attributes;
  error?: string;
  /** A host-wide agent's traced span: the program it came from, sent as its service.name. */
  service?: string;
}

function toHrTime(ns: bigint): HrTime {
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** Rough heap cost of a queued record, for the queue's memory cap. */
export function approximateBytes(r: SpanRecord): number {
  let bytes = 320 + r.name.length * 2;
  const attrs = r.attributes;
  for (const k in attrs) {
    const v = attrs[k];
    bytes += 48 + k.length * 2;
    if (typeof v === 'string') bytes += v.length * 2;
    else if (Array.isArray(v))
      for (const x of v) bytes += typeof x === 'string' ? x.length * 2 + 16 : 16;
  }
  return bytes;
}

const NONE: never[] = [];
const UNSET = { code: SpanStatusCode.UNSET };

/**
 * A queued record seen as the `ReadableSpan` the exporter serializes: one small object per span
 * at export time, every field read through the prototype (the exporter reads each field twice,
 * once to size the request and once to write it; what it computes is short-lived garbage).
 */
class ExportedSpan implements ReadableSpan {
  constructor(
    private readonly r: SpanRecord,
    readonly resource: Resource,
    readonly instrumentationScope: InstrumentationScope,
  ) {}
  get name(): string {
    return this.r.name;
  }
  get kind(): SpanKind {
    return this.r.kind;
  }
  spanContext(): SpanContext {
    return { traceId: this.r.traceId, spanId: this.r.spanId, traceFlags: 1 };
  }
  get parentSpanContext(): SpanContext | undefined {
    const r = this.r;
    return r.parentSpanId
      ? { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: 1 }
      : undefined;
  }
  get startTime(): HrTime {
    return toHrTime(this.r.startNs);
  }
  get endTime(): HrTime {
    return toHrTime(this.r.startNs + BigInt(Math.round(this.r.durationNs)));
  }
  get duration(): HrTime {
    return toHrTime(BigInt(Math.round(this.r.durationNs)));
  }
  get status(): SpanStatus {
    return this.r.error ? { code: SpanStatusCode.ERROR, message: this.r.error } : UNSET;
  }
  get attributes(): Attributes {
    return this.r.attributes;
  }
  get links(): never[] {
    return NONE;
  }
  get events(): never[] {
    return NONE;
  }
  get ended(): boolean {
    return true;
  }
  get droppedAttributesCount(): number {
    return 0;
  }
  get droppedEventsCount(): number {
    return 0;
  }
  get droppedLinksCount(): number {
    return 0;
  }
}

export function toReadableSpan(
  r: SpanRecord,
  resource: Resource,
  scope: InstrumentationScope,
): ReadableSpan {
  return new ExportedSpan(r, resource, scope);
}

export { SpanKind };
