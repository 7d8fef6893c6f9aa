import { describe, expect, it } from 'vitest';
import protobuf from 'protobufjs';
import { otlpFuzzBodies } from '@onset/testkit/otlp-fuzz';
import { TraceRequest } from '../src/otlp/protobuf.ts';
import { decodeLean } from '../src/otlp/protobuf-traces.ts';
import { normalizeTraces, type SpanLimits } from '../src/otlp/normalize-traces.ts';

/**
 * Trace ingest decodes protobuf bodies with its own lean reader
 * (otlp/protobuf-traces.ts) instead of protobufjs's message objects: every
 * body must be accepted or refused as protobufjs does, and what is accepted
 * must normalise to the same spans (ids, times to the nanosecond, kinds,
 * series, resources, attributes) and the same refusals.
 */
const limits: SpanLimits = {
  maxDurationMs: 86_400_000,
  maxAttributes: 128,
  oldestMs: Date.now() - 30 * 86_400_000,
  newestMs: Date.now() + 3_600_000,
};

function outcome(decode: () => unknown): { ok: true; norm: unknown } | { ok: false } {
  let msg: unknown;
  try {
    msg = decode();
  } catch {
    return { ok: false };
  }
  return { ok: true, norm: normalizeTraces(msg as never, limits) };
}

function expectSame(body: Buffer): boolean {
  const reference = outcome(() => TraceRequest.decode(body));
  const lean = outcome(() => decodeLean(body));
  expect(lean.ok).toBe(reference.ok);
  if (lean.ok && reference.ok) expect(lean.norm).toEqual(reference.norm);
  return reference.ok;
}

describe('lean protobuf decoding of trace exports', () => {
  it('accepts and refuses mutated protobuf bodies as protobufjs does, with the same spans', () => {
    const next = otlpFuzzBodies(33);
    let bodies = 0;
    let accepted = 0;
    let spans = 0;
    while (bodies < 1000) {
      const b = next();
      if (b.path !== '/v1/traces' || b.type !== 'protobuf') continue;
      bodies++;
      if (expectSame(b.body)) {
        accepted++;
        spans += normalizeTraces(decodeLean(b.body) as never, limits).observations.length;
      }
    }
    // The mutants reach both outcomes, and the accepted ones carry spans.
    expect(accepted).toBeGreaterThan(bodies * 0.2);
    expect(accepted).toBeLessThan(bodies * 0.95);
    expect(spans).toBeGreaterThan(accepted);
  });

  it('reads spans with events, links, status and scopes, and nanosecond times, as protobufjs does', () => {
    const nowNs = BigInt(Date.now() - 5000) * 1_000_000n;
    const msg = TraceRequest.fromObject({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: 'lean' } },
              { key: 'host.name', value: { stringValue: 'h1' } },
              { key: 'n', value: { intValue: -7 } },
            ],
          },
          scopeSpans: [
            {
              scope: { name: 'lib', version: '1', attributes: [] },
              spans: [
                {
                  traceId: Buffer.alloc(16, 1),
                  spanId: Buffer.alloc(8, 2),
                  parentSpanId: Buffer.alloc(8, 3),
                  traceState: 'k=v',
                  name: 'GET /lean/{id}',
                  kind: 2,
                  startTimeUnixNano: String(nowNs + 123n),
                  endTimeUnixNano: String(nowNs + 4_567_891n),
                  attributes: [
                    { key: 'http.request.method', value: { stringValue: 'GET' } },
                    { key: 'http.route', value: { stringValue: '/lean/{id}' } },
                    { key: 'ok', value: { boolValue: true } },
                    { key: 'ratio', value: { doubleValue: 0.25 } },
                    { key: 'raw', value: { bytesValue: Buffer.from('hi') } },
                    {
                      key: 'list',
                      value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } },
                    },
                    {
                      key: 'map',
                      value: { kvlistValue: { values: [{ key: 'x', value: { intValue: 1 } }] } },
                    },
                  ],
                  events: [{ name: 'e', timeUnixNano: String(nowNs) }],
                  links: [{ traceId: Buffer.alloc(16, 4), spanId: Buffer.alloc(8, 5) }],
                  status: { code: 2, message: 'boom' },
                  flags: 1,
                },
                { traceId: Buffer.alloc(16, 6), spanId: Buffer.alloc(8, 7) },
              ],
            },
          ],
        },
      ],
    });
    const body = Buffer.from(TraceRequest.encode(msg).finish());
    expect(expectSame(body)).toBe(true);
    const norm = normalizeTraces(decodeLean(body) as never, limits);
    expect(norm.observations).toHaveLength(1);
    expect(norm.observations[0]!.durationUs).toBe(4567.768);
    expect(norm.rejected).toBe(1);
  });

  it('refuses what protobufjs refuses inside the parts ingest does not read', () => {
    const good = TraceRequest.fromObject({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(8, 2), name: 'x', kind: 1 },
              ],
            },
          ],
        },
      ],
    });
    expect(expectSame(Buffer.from(TraceRequest.encode(good).finish()))).toBe(true);
    // A span whose event (field 11) claims more bytes than it has.
    const badEvent = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .bytes(Buffer.alloc(16, 1))
      .uint32((2 << 3) | 2)
      .bytes(Buffer.alloc(8, 2))
      .uint32((11 << 3) | 2)
      .bytes(Buffer.from([(1 << 3) | 2, 50, 1, 2]))
      .finish();
    const wrap = (field: number, inner: Uint8Array) =>
      protobuf.Writer.create()
        .uint32((field << 3) | 2)
        .bytes(inner)
        .finish();
    const body = Buffer.from(wrap(1, wrap(2, wrap(2, badEvent))));
    expect(expectSame(body)).toBe(false);
    // An unknown field with an invalid wire type.
    expect(expectSame(Buffer.from([(9 << 3) | 7, 0]))).toBe(false);
  });
});
