/**
 * What an incident generator emits, independent of the wire: a span on a
 * resource, optionally the child of another. The SDK replay and the OTLP
 * JSON sender each implement SpanSink.
 */
import { MIN } from './times.ts';

export type Kind = 'internal' | 'server' | 'client';
export type Attrs = Record<string, string | number>;

export interface SpanSink<Ref> {
  span(
    resource: Record<string, string>,
    name: string,
    kind: Kind,
    startMs: number,
    durationMs: number,
    attributes: Attrs,
    parent?: Ref,
  ): Ref;
}

/** The start of event i of n spread over the minute at minuteMs, with a random offset in its slot. */
export const within = (rand: () => number, minuteMs: number, i: number, n: number): number =>
  minuteMs + ((i + rand()) * MIN) / n;
