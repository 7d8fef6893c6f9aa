/**
 * A finished span in a compact form. The agent queues these (not SDK Span
 * objects, which are several times larger) and turns them into the
 * `ReadableSpan`s the official OTLP exporter encodes only when sending.
 */
import { SpanKind, SpanStatusCode, type Attributes, type HrTime } from '@opentelemetry/api';
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

export function toReadableSpan(
  r: SpanRecord,
  resource: Resource,
  scope: InstrumentationScope,
): ReadableSpan {
  const spanContext = { traceId: r.traceId, spanId: r.spanId, traceFlags: 1 };
  const ns = BigInt(Math.round(r.durationNs));
  return {
    name: r.name,
    kind: r.kind,
    spanContext: () => spanContext,
    parentSpanContext: r.parentSpanId
      ? { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: 1 }
      : undefined,
    startTime: toHrTime(r.startNs),
    endTime: toHrTime(r.startNs + ns),
    duration: toHrTime(ns),
    status: r.error
      ? { code: SpanStatusCode.ERROR, message: r.error }
      : { code: SpanStatusCode.UNSET },
    attributes: r.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

export { SpanKind };
