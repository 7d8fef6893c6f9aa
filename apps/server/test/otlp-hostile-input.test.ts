import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import protobuf from 'protobufjs';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  MetricsRequest,
  MetricsResponse,
  TraceRequest,
  TraceResponse,
} from '../src/otlp/protobuf.ts';

/**
 * The reproduction cases of issue 19 ("5xx on input"): each goes in a batch
 * next to good spans (or data points), in JSON and in protobuf. The answer is
 * a 4xx or a 200 whose partialSuccess counts the refused items, never a 5xx,
 * and the good items of the same batch are stored.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const NOW_NS = BigInt(Date.now() - 60_000) * 1_000_000n;
let counter = 1;
const nextId = (bytes: number) => (counter++).toString(16).padStart(bytes * 2, '0');
const kv = (key: string, value: unknown) => ({ key, value });
const str = (stringValue: string) => ({ stringValue });

interface SpanSpec {
  name?: string;
  kind?: number;
  attributes?: unknown[];
}
function span(s: SpanSpec = {}) {
  return {
    traceId: nextId(16),
    spanId: nextId(8),
    name: s.name ?? 'GET /ok',
    kind: s.kind ?? 2,
    startTimeUnixNano: String(NOW_NS),
    endTimeUnixNano: String(NOW_NS + 5_000_000n),
    attributes: s.attributes ?? [],
  };
}
function resourceSpans(service: string | unknown[], spans: unknown[]) {
  const attributes = typeof service === 'string' ? [kv('service.name', str(service))] : service;
  return { resource: { attributes }, scopeSpans: [{ spans }] };
}
const traces = (...rs: unknown[]) => ({ resourceSpans: rs });

/** The JSON body as protobuf: hex ids become bytes, decimal strings stay int64 strings. */
function tracesProtobuf(body: ReturnType<typeof traces>): Buffer {
  const copy = JSON.parse(JSON.stringify(body));
  for (const rs of copy.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans) {
        s.traceId = Buffer.from(s.traceId, 'hex');
        s.spanId = Buffer.from(s.spanId, 'hex');
      }
  return Buffer.from(TraceRequest.encode(TraceRequest.fromObject(copy)).finish());
}

async function send(
  path: '/v1/traces' | '/v1/metrics',
  body: string | Buffer,
  type: 'json' | 'protobuf',
) {
  const res = await fetch(`${server.otlpUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': type === 'json' ? 'application/json' : 'application/x-protobuf' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let partial: { rejected: number; errorMessage: string } | null = null;
  if (res.status === 200) {
    const decoded: any =
      type === 'json'
        ? JSON.parse(bytes.toString('utf8'))
        : (path === '/v1/traces' ? TraceResponse : MetricsResponse).decode(bytes);
    const p = decoded.partialSuccess;
    if (p)
      partial = {
        // JSON has int64 as a decimal string, protobufjs as a Long: both print as decimals.
        rejected: Number(String(p.rejectedSpans ?? p.rejectedDataPoints ?? 0)),
        errorMessage: p.errorMessage ?? '',
      };
  }
  return { status: res.status, partial, text: bytes.toString('utf8') };
}

async function seriesOf(service: string) {
  const { rows } = await server.onset.pool.query(
    `SELECT s.name, count(o.*)::int AS spans FROM series s LEFT JOIN observations o ON o.series_id = s.id
      WHERE s.service = $1 GROUP BY s.name ORDER BY s.name`,
    [service],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.spans]));
}
const spansOf = async (service: string) =>
  Object.values(await seriesOf(service)).reduce((a: number, n) => a + (n as number), 0);

async function healthy() {
  expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
}

for (const type of ['json', 'protobuf'] as const) {
  const encode = (b: ReturnType<typeof traces>) =>
    type === 'json' ? JSON.stringify(b) : tracesProtobuf(b);

  describe(`hostile OTLP traces (${type})`, () => {
    it('a NUL in service.name is stored as U+FFFD, with the good resource of the batch', async () => {
      const good = `good-nul-svc-${type}`;
      const res = await send(
        '/v1/traces',
        encode(
          traces(
            resourceSpans(`nul\u0000svc-${type}`, [span()]),
            resourceSpans(good, [span(), span()]),
          ),
        ),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toBeNull();
      expect(await spansOf(good)).toBe(2);
      expect(await spansOf(`nul\uFFFDsvc-${type}`)).toBe(1);
      await healthy();
    });

    it('a NUL in a span name and in attribute keys and values is stored as U+FFFD', async () => {
      const service = `nul-name-${type}`;
      const res = await send(
        '/v1/traces',
        encode(
          traces(
            resourceSpans(service, [
              span({
                name: 'bad\u0000name',
                kind: 1,
                attributes: [kv('k\u0000ey', str('v\u0000alue')), kv('onset.op', str('other'))],
              }),
              span({ name: 'fine', kind: 1 }),
            ]),
          ),
        ),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toBeNull();
      expect(await seriesOf(service)).toEqual({ 'bad\uFFFDname': 1, fine: 1 });
      const { rows } = await server.onset.pool.query(
        `SELECT o.attrs FROM observations o JOIN series s ON s.id = o.series_id
          WHERE s.service = $1 AND s.name = 'bad\uFFFDname'`,
        [service],
      );
      expect(rows[0].attrs).toMatchObject({ 'k\uFFFDey': 'v\uFFFDalue' });
    });

    it('span kind 40000 refuses that span alone (partial success)', async () => {
      const service = `kind-${type}`;
      const res = await send(
        '/v1/traces',
        encode(traces(resourceSpans(service, [span({ kind: 40000 }), span(), span()]))),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toEqual({
        rejected: 1,
        errorMessage: expect.stringMatching(/span kind 40000 is not a SpanKind/),
      });
      expect(await spansOf(service)).toBe(2);
      await healthy();
    });

    it('a resource with 200 long dependency.* attributes is stored (its key is a digest)', async () => {
      const service = `deps-${type}`;
      const attrs = [kv('service.name', str(service))];
      for (let i = 0; i < 200; i++)
        attrs.push(kv(`dependency.lib${i}`, str(`${i}.`.padEnd(300, 'x'))));
      const res = await send(
        '/v1/traces',
        encode(traces(resourceSpans(attrs, [span()]), resourceSpans(`${service}-good`, [span()]))),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toBeNull();
      expect(await spansOf(service)).toBe(1);
      expect(await spansOf(`${service}-good`)).toBe(1);
      const { rows } = await server.onset.pool.query(
        `SELECT attrs_key, (SELECT count(*)::int FROM jsonb_object_keys(attrs)) AS n FROM resources WHERE service = $1`,
        [service],
      );
      expect(rows).toEqual([{ attrs_key: expect.stringMatching(/^[0-9a-f]{64}$/), n: 200 }]);
      // The same resource again maps to the same row.
      await send('/v1/traces', encode(traces(resourceSpans(attrs, [span()]))), type);
      const again = await server.onset.pool.query(
        `SELECT count(*)::int AS n FROM resources WHERE service = $1`,
        [service],
      );
      expect(again.rows[0].n).toBe(1);
    });

    it('a resource with more attributes than the limit refuses its own spans only', async () => {
      const service = `too-many-${type}`;
      const attrs = [kv('service.name', str(service))];
      for (let i = 0; i < 1100; i++) attrs.push(kv(`a${i}`, str('x')));
      const res = await send(
        '/v1/traces',
        encode(
          traces(resourceSpans(attrs, [span(), span()]), resourceSpans(`${service}-ok`, [span()])),
        ),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toEqual({
        rejected: 2,
        errorMessage: expect.stringMatching(/resource has 1101 attributes/),
      });
      expect(await spansOf(`${service}-ok`)).toBe(1);
    });
  });
}

describe('hostile OTLP traces: encoding-specific cases', () => {
  it('JSON: lone UTF-16 surrogates in names, keys, values and cohort attributes become U+FFFD', async () => {
    const service = 'lone-surrogate';
    // JSON.stringify writes lone surrogates as \ud800 escapes, which JSON.parse turns back into lone surrogates.
    const body = JSON.stringify(
      traces(
        resourceSpans(
          [kv('service.name', str(service)), kv('dependency.x\udc00', str('1.0\ud800'))],
          [
            span({ name: 'a\ud800b', kind: 1, attributes: [kv('k\udfff', str('\udbff'))] }),
            span({ name: 'pair \ud83d\ude00 ok', kind: 1 }),
          ],
        ),
      ),
    );
    expect(body).toContain('\\ud800');
    const res = await send('/v1/traces', body, 'json');
    expect(res.status).toBe(200);
    expect(res.partial).toBeNull();
    expect(await seriesOf(service)).toEqual({ 'a\uFFFDb': 1, 'pair \ud83d\ude00 ok': 1 });
    const { rows } = await server.onset.pool.query(
      `SELECT attrs FROM resources WHERE service = $1`,
      [service],
    );
    expect(rows[0].attrs).toEqual({ 'dependency.x\uFFFD': '1.0\uFFFD' });
  });

  it('protobuf: a string that is not UTF-8 (an encoded surrogate) is stored with U+FFFD', async () => {
    const service = 'bad-utf8';
    const buf = tracesProtobuf(
      traces(resourceSpans(service, [span({ name: 'xQQQx', kind: 1 }), span({ kind: 1 })])),
    );
    const at = buf.indexOf('QQQ');
    Buffer.from([0xed, 0xa0, 0x80]).copy(buf, at); // UTF-8 bytes of U+D800, which UTF-8 forbids
    const res = await send('/v1/traces', buf, 'protobuf');
    expect(res.status).toBe(200);
    expect(res.partial).toBeNull();
    const names = Object.keys(await seriesOf(service));
    expect(names).toHaveLength(2);
    expect(names.join()).not.toMatch(/[\ud800-\udfff]/);
  });

  it('JSON: an attribute value nested 1,000 deep is cut at depth 8, the span and its neighbours stored', async () => {
    const service = 'deep-json';
    let deep: unknown = str('bottom');
    for (let i = 0; i < 1000; i++) deep = { arrayValue: { values: [deep] } };
    let deepKv: unknown = str('bottom');
    for (let i = 0; i < 1000; i++) deepKv = { kvlistValue: { values: [kv('k', deepKv)] } };
    const res = await send(
      '/v1/traces',
      JSON.stringify(
        traces(
          resourceSpans(
            [kv('service.name', str(service)), kv('dependency.deep', deepKv)],
            [span({ attributes: [kv('deep', deep)] }), span()],
          ),
        ),
      ),
      'json',
    );
    expect(res.status).toBe(200);
    expect(res.partial).toBeNull();
    expect(await spansOf(service)).toBe(2);
    await healthy();
  });

  it('protobuf: an attribute value nested 1,000 deep is refused as a message (protoc’s nesting limit, 100)', async () => {
    // AnyValue{array_value=5: ArrayValue{values=1: AnyValue}}, written by hand: the encoder has the same limit.
    let value = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('bottom')
      .finish();
    for (let i = 0; i < 1000; i++) {
      const array = protobuf.Writer.create()
        .uint32((1 << 3) | 2)
        .bytes(value)
        .finish();
      value = protobuf.Writer.create()
        .uint32((5 << 3) | 2)
        .bytes(array)
        .finish();
    }
    const good = tracesProtobuf(traces(resourceSpans('deep-pb', [span()])));
    const attr = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('deep')
      .uint32((2 << 3) | 2)
      .bytes(value)
      .finish();
    const spanMsg = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .bytes(Buffer.alloc(16, 7))
      .uint32((2 << 3) | 2)
      .bytes(Buffer.alloc(8, 7))
      .uint32((9 << 3) | 2)
      .bytes(attr)
      .finish();
    const scope = protobuf.Writer.create()
      .uint32((2 << 3) | 2)
      .bytes(spanMsg)
      .finish();
    const rs = protobuf.Writer.create()
      .uint32((2 << 3) | 2)
      .bytes(scope)
      .finish();
    const body = Buffer.concat([
      good,
      protobuf.Writer.create()
        .uint32((1 << 3) | 2)
        .bytes(rs)
        .finish(),
    ]);
    const res = await send('/v1/traces', body, 'protobuf');
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/nesting depth/);
    await healthy();
  });

  it('JSON: kind as an unknown or prototype name ("constructor") refuses the span, not the batch', async () => {
    const service = 'kind-names';
    const res = await send(
      '/v1/traces',
      JSON.stringify(
        traces(
          resourceSpans(service, [
            { ...span(), kind: 'constructor' },
            { ...span(), kind: 'SPAN_KIND_SERVER' },
          ]),
        ),
      ),
      'json',
    );
    expect(res.status).toBe(200);
    expect(res.partial).toEqual({
      rejected: 1,
      errorMessage: expect.stringMatching(/constructor/),
    });
    expect(await spansOf(service)).toBe(1);
  });
});

/** A latency histogram data point (explicit buckets, ms). */
function point(over: Record<string, unknown> = {}) {
  return {
    startTimeUnixNano: String(NOW_NS - 60_000_000_000n),
    timeUnixNano: String(NOW_NS),
    count: '3',
    sum: 30,
    bucketCounts: ['1', '1', '1'],
    explicitBounds: [5, 10],
    attributes: [kv('http.route', str('/h'))],
    ...over,
  };
}
function metrics(service: string, name: string, points: unknown[], extra: unknown[] = []) {
  return {
    resourceMetrics: [
      {
        resource: { attributes: [kv('service.name', str(service))] },
        scopeMetrics: [
          {
            metrics: [
              {
                name,
                unit: 'ms',
                histogram: { aggregationTemporality: 1, dataPoints: points },
              },
              ...extra,
            ],
          },
        ],
      },
    ],
  };
}
const metricsProtobuf = (b: unknown) =>
  Buffer.from(MetricsRequest.encode(MetricsRequest.fromObject(b as never)).finish());

async function storedCount(service: string): Promise<number> {
  const { rows } = await server.onset.pool.query(
    `SELECT coalesce(sum(h.count), 0)::int AS n FROM histograms h JOIN series s ON s.id = h.series_id WHERE s.service = $1`,
    [service],
  );
  return rows[0].n;
}

for (const type of ['json', 'protobuf'] as const) {
  const encode = (b: unknown) => (type === 'json' ? JSON.stringify(b) : metricsProtobuf(b));
  describe(`hostile OTLP metrics (${type})`, () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [
        'a bucket count of 2^64-1',
        { bucketCounts: ['1', '18446744073709551615', '1'], count: '3' },
        /more than 1000000000 observations/,
      ],
      ['a count of 2^63-1', { count: '9223372036854775807' }, /count must be between/],
      [
        'a start time after the point time',
        { startTimeUnixNano: String(NOW_NS + 1_000_000n) },
        /startTimeUnixNano/,
      ],
      ['a sum that overflows in microseconds', { sum: 1e306 }, /out of range/],
    ];
    for (const [label, over, reason] of cases)
      it(`${label} refuses that data point alone`, async () => {
        const service = `m-${label.replace(/\W+/g, '-')}-${type}`;
        const res = await send(
          '/v1/metrics',
          encode(metrics(service, 'http.server.request.duration', [point(over), point()])),
          type,
        );
        expect(res.status).toBe(200);
        expect(res.partial).toEqual({ rejected: 1, errorMessage: expect.stringMatching(reason) });
        expect(await storedCount(service)).toBe(3);
        await healthy();
      });

    it('an exponential histogram with a bucket offset past int32 refuses that point alone', async () => {
      const service = `m-exp-${type}`;
      const exp = {
        name: 'rpc.server.duration',
        unit: 'ms',
        exponentialHistogram: {
          aggregationTemporality: 1,
          dataPoints: [
            {
              timeUnixNano: String(NOW_NS),
              count: '2',
              scale: 0,
              positive: {
                offset: type === 'json' ? 2 ** 40 : 2 ** 31 - 1,
                bucketCounts: ['1', '1'],
              },
            },
          ],
        },
      };
      const res = await send(
        '/v1/metrics',
        encode(metrics(service, 'http.server.request.duration', [point()], [exp])),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toEqual({ rejected: 1, errorMessage: expect.stringMatching(/offset/) });
      expect(await storedCount(service)).toBe(3);
    });

    it('a NUL in the metric name and a unit named "constructor" are harmless', async () => {
      const service = `m-nul-${type}`;
      const odd = {
        name: 'weird',
        unit: 'constructor',
        histogram: { aggregationTemporality: 1, dataPoints: [point()] },
      };
      const res = await send(
        '/v1/metrics',
        encode(metrics(service, 'rpc.nul\u0000.duration', [point({ attributes: [] })], [odd])),
        type,
      );
      expect(res.status).toBe(200);
      expect(res.partial).toBeNull();
      expect(await storedCount(service)).toBe(3);
      const { rows } = await server.onset.pool.query(`SELECT name FROM series WHERE service = $1`, [
        service,
      ]);
      expect(rows.map((r) => r.name)).toEqual(['rpc.nul\uFFFD.duration']);
    });
  });
}
