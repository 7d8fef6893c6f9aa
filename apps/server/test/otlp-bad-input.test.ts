import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '@onset/testkit';
import { TraceRequest } from '../src/otlp/protobuf.ts';
import { Status } from '../src/otlp/status.ts';

let server: TestServer;
const LIMIT = 8 * 1024 * 1024; // below the 64 MiB default so the over-limit cases stay quick, above a 100k-attribute span

beforeAll(async () => {
  server = await startTestServer({ env: { ONSET_MAX_BODY_BYTES: String(LIMIT) } });
});
afterAll(async () => {
  await server?.close();
});

const NOW_NS = BigInt(Date.now() - 60_000) * 1_000_000n;
let spanCounter = 1;

function span(over: Record<string, unknown> = {}) {
  const id = (spanCounter++).toString(16).padStart(16, '0');
  return {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: id,
    name: 'GET /x',
    kind: 2,
    startTimeUnixNano: String(NOW_NS),
    endTimeUnixNano: String(NOW_NS + 5_000_000n),
    attributes: [{ key: 'http.request.method', value: { stringValue: 'GET' } }],
    ...over,
  };
}

function body(spans: unknown[], service = 'bad-input') {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ spans }],
      },
    ],
  };
}

async function post(payload: Buffer | string, headers: Record<string, string>) {
  const body = typeof payload === 'string' ? payload : new Uint8Array(payload);
  const res = await fetch(`${server.otlpUrl}/v1/traces`, { method: 'POST', headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  return { status: res.status, headers: res.headers, bytes, text, json: () => JSON.parse(text) };
}

const postJson = (obj: unknown, extra: Record<string, string> = {}) =>
  post(JSON.stringify(obj), { 'content-type': 'application/json', ...extra });

async function storedSpans(): Promise<number> {
  const { rows } = await server.onset.pool.query('SELECT count(*)::int AS n FROM observations');
  return rows[0].n;
}

/** Refusals are google.rpc.Status: protobuf for protobuf requests, its JSON form (plus the API's `error`) otherwise. */
async function expectRefused(
  res: { status: number; headers: Headers; bytes: Buffer; text: string; json: () => any },
  status: number,
  message: RegExp,
  requestWasProtobuf = false,
) {
  expect(res.status).toBe(status);
  if (requestWasProtobuf) {
    expect(res.headers.get('content-type')).toMatch(/^application\/x-protobuf/);
    const err = Status.toObject(Status.decode(res.bytes)) as { code: number; message: string };
    expect(err.code).toBeGreaterThan(0);
    expect(err.message).toMatch(message);
    expect(err.message).not.toMatch(/at .*\.ts:\d+/); // never a stack trace
    return;
  }
  const err = res.json();
  expect(typeof err.error).toBe('string');
  expect(typeof err.code).toBe('number');
  expect(err.details).toEqual([]);
  expect(err.message).toMatch(message);
  expect(res.text).not.toMatch(/at .*\.ts:\d+/); // never a stack trace
}

describe('bad OTLP input gets a clear 4xx, stores nothing, and the server stays healthy', () => {
  const cases: Array<[string, () => ReturnType<typeof post>, number, RegExp]> = [
    [
      'garbage bytes as protobuf',
      () =>
        post(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x07, 0x99]), {
          'content-type': 'application/x-protobuf',
        }),
      400,
      /protobuf/,
    ],
    [
      'truncated protobuf',
      () => {
        const msg = TraceRequest.fromObject({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: Buffer.alloc(16, 1),
                      spanId: Buffer.alloc(8, 2),
                      name: 'x',
                      startTimeUnixNano: 1,
                      endTimeUnixNano: 2,
                    },
                  ],
                },
              ],
            },
          ],
        });
        const full = Buffer.from(TraceRequest.encode(msg).finish());
        return post(full.subarray(0, full.length - 7), {
          'content-type': 'application/x-protobuf',
        });
      },
      400,
      /protobuf/,
    ],
    [
      'wrong content type',
      () => post('hello', { 'content-type': 'text/plain' }),
      415,
      /Content-Type/,
    ],
    [
      'garbage JSON',
      () => post('{"resourceSpans": [', { 'content-type': 'application/json' }),
      400,
      /JSON/,
    ],
    [
      'JSON with wrong types',
      () => postJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span(), name: 42 }] }] }] }),
      400,
      /name/,
    ],
    [
      'JSON whose spans is not an array',
      () => postJson({ resourceSpans: [{ scopeSpans: [{ spans: 'nope' }] }] }),
      400,
      /spans/,
    ],
    ['an invalid trace id', () => postJson(body([span({ traceId: 'zz' })])), 400, /trace id/],
    [
      'an all-zero span id',
      () => postJson(body([span({ spanId: '0000000000000000' })])),
      400,
      /span id/,
    ],
    [
      'end before start',
      () => postJson(body([span({ endTimeUnixNano: String(NOW_NS - 1_000n) })])),
      400,
      /ends before it starts/,
    ],
    [
      'an absurd duration (> 1 day)',
      () => postJson(body([span({ endTimeUnixNano: String(NOW_NS + 2n * 86_400_000_000_000n) })])),
      400,
      /exceeds/,
    ],
    [
      '100,000 attributes on one span',
      () =>
        postJson(
          body([
            span({
              attributes: Array.from({ length: 100_000 }, (_, i) => ({
                key: `k${i}`,
                value: { intValue: String(i) },
              })),
            }),
          ]),
        ),
      400,
      /attributes/,
    ],
    [
      'a gzip bomb (small body inflating past the limit)',
      () =>
        post(gzipSync(Buffer.alloc(LIMIT * 4, 0x20)), {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        }),
      413,
      /limit/,
    ],
    [
      'a body over the size limit',
      () => post(Buffer.alloc(LIMIT + 1024, 0x20), { 'content-type': 'application/json' }),
      413,
      /./,
    ],
    [
      'an unknown content encoding',
      () => post('{}', { 'content-type': 'application/json', 'content-encoding': 'br' }),
      415,
      /Content-Encoding/,
    ],
  ];

  for (const [label, send, status, message] of cases) {
    it(label, async () => {
      const before = await storedSpans();
      await expectRefused(await send(), status, message, /protobuf/.test(label));
      expect(await storedSpans()).toBe(before);
      const health = await fetch(`${server.url}/readyz`);
      expect(health.status).toBe(200);
    });
  }

  it('a refused protobuf request gets a protobuf google.rpc.Status with the reason (what the Collector logs)', async () => {
    const msg = TraceRequest.fromObject({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.alloc(16, 3),
                  spanId: Buffer.alloc(8, 4),
                  name: 'x',
                  startTimeUnixNano: (NOW_NS + 9n).toString(),
                  endTimeUnixNano: NOW_NS.toString(),
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await post(Buffer.from(TraceRequest.encode(msg).finish()), {
      'content-type': 'application/x-protobuf',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-protobuf/);
    expect(Status.toObject(Status.decode(res.bytes))).toEqual({
      code: 3,
      message: expect.stringMatching(/all 1 spans were rejected: .*ends before it starts/),
    });

    const unsupported = await post(Buffer.from('x'), {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'br',
    });
    expect(unsupported.status).toBe(415);
    expect(Status.toObject(Status.decode(unsupported.bytes))).toEqual({
      code: 12,
      message: expect.stringMatching(/Content-Encoding "br"/),
    });
  });

  it('a refused JSON request gets the JSON form of google.rpc.Status, keeping the API error code', async () => {
    const res = await postJson(body([span({ spanId: '0000000000000000' })]));
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      code: 3,
      message: expect.stringMatching(/span id/),
      details: [],
      error: 'bad_request',
    });
  });

  it('a mixed batch stores the good spans and reports the bad ones as partial success', async () => {
    const before = await storedSpans();
    const res = await postJson(body([span(), span({ spanId: 'xyz' }), span()]));
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      partialSuccess: { rejectedSpans: '1', errorMessage: expect.stringMatching(/span id/) },
    });
    expect(await storedSpans()).toBe(before + 2);
  });

  it('unknown fields are accepted and ignored, as OTLP requires', async () => {
    const before = await storedSpans();
    const payload = body([{ ...span(), futureField: { nested: true }, droppedEventsCount: 3 }]);
    (payload as any).somethingNew = 1;
    const res = await postJson(payload);
    expect(res.status).toBe(200);
    expect(await storedSpans()).toBe(before + 1);
  });

  it('gzip-compressed protobuf is accepted and answered in protobuf', async () => {
    const msg = TraceRequest.fromObject({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gz' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: Buffer.alloc(16, 7),
                  spanId: Buffer.alloc(8, 9),
                  name: 'fsync',
                  kind: 1,
                  startTimeUnixNano: NOW_NS.toString(),
                  endTimeUnixNano: (NOW_NS + 2_000_000n).toString(),
                },
              ],
            },
          ],
        },
      ],
    });
    const res = await post(gzipSync(Buffer.from(TraceRequest.encode(msg).finish())), {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/x-protobuf/);
  });

  it('a span days old (backfill) lands in its own minute', async () => {
    const threeDaysAgo = Math.floor((Date.now() - 3 * 86_400_000) / 60_000) * 60_000 + 17_000;
    const start = BigInt(threeDaysAgo) * 1_000_000n;
    const res = await postJson(
      body(
        [span({ startTimeUnixNano: String(start), endTimeUnixNano: String(start + 7_000_000n) })],
        'backfill',
      ),
    );
    expect(res.status).toBe(200);
    const { rows } = await server.onset.pool.query(
      `SELECT h.minute FROM histograms h JOIN series s ON s.id = h.series_id WHERE s.service = 'backfill'`,
    );
    expect(rows.map((r) => r.minute.getTime())).toEqual([threeDaysAgo - 17_000]);
  });
});
