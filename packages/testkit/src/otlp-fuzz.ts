/**
 * Mutated OTLP bodies for the ingest fuzz test (apps/server/test/otlp-fuzz)
 * and benchmark (bench/fuzz): valid ExportTraceServiceRequest and
 * ExportMetricsServiceRequest bodies, in JSON and protobuf, then mutated the
 * way hostile or broken senders do: extreme values at random places (NUL,
 * lone surrogates, 2^64-1, kind 40000, 1e308, huge strings, deep nesting,
 * prototype names), field splices between bodies, deleted fields, many
 * attributes, and byte-level damage (bit flips, truncation, byte splices,
 * garbage). One seed draws the same sequence of bodies every time (the times
 * in them follow the clock so they stay inside the accepted window).
 */
import { MetricsRequest, TraceRequest } from '@onset/server/internals';
import { mulberry32 } from './random.ts';

export interface FuzzBody {
  path: '/v1/traces' | '/v1/metrics';
  type: 'json' | 'protobuf';
  contentType: string;
  body: Buffer;
  /** What was done to the valid body (for the per-mutation tally). */
  mutation: string;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const kv = (key: string, value: Json): Json => ({ key, value });
const str = (stringValue: string): Json => ({ stringValue });

function deepValue(depth: number): Json {
  let v: Json = str('bottom');
  for (let i = 0; i < depth; i++)
    v = i % 2 ? { arrayValue: { values: [v] } } : { kvlistValue: { values: [kv('k', v)] } };
  return v;
}

/** Values that have broken receivers: each replaces a random field of a valid body. */
const EXTREMES: Array<() => Json> = [
  () => '',
  () => '\u0000',
  () => 'svc\u0000name',
  () => '\ud800',
  () => 'x\udfff\ud800y',
  () => '\ud83d\ude80'.repeat(200),
  () => 'x'.repeat(20_000),
  () => 'constructor',
  () => '__proto__',
  () => 'SPAN_KIND_SERVER',
  () => 'AGGREGATION_TEMPORALITY_CUMULATIVE',
  () => -1,
  () => 0,
  () => 1.5,
  () => 40_000,
  () => -40_000,
  () => 2 ** 31,
  () => 2 ** 32 + 1,
  () => 2 ** 53 + 2,
  () => 1e308,
  () => -1e308,
  () => '18446744073709551615',
  () => '9223372036854775807',
  () => '-9223372036854775808',
  () => '99999999999999999999999999999999',
  () => '-1',
  () => 'NaN',
  () => 'Infinity',
  () => true,
  () => null,
  () => ({}),
  () => [],
  () => deepValue(50),
  () => deepValue(1000),
  () => Array.from({ length: 500 }, (_, i) => kv(`dependency.lib${i}`, str(`${i}`))),
  () => ({ stringValue: '\u0000' }),
  () => ({ intValue: '18446744073709551615' }),
  () => ({ arrayValue: { values: Array.from({ length: 2000 }, () => str('v')) } }),
];

export function otlpFuzzBodies(seed: number): () => FuzzBody {
  const rnd = mulberry32(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const hex = (bytes: number) =>
    Array.from({ length: bytes * 2 }, () => '0123456789abcdef'[int(16)]).join('');

  function resource(): Json {
    const attrs: Json[] = [kv('service.name', str(pick(['checkout', 'cart', 'pageserver'])))];
    if (rnd() < 0.7) attrs.push(kv('host.name', str(`node-${int(4)}`)));
    if (rnd() < 0.5) attrs.push(kv('dependency.hyper', str(`0.${int(20)}.1`)));
    if (rnd() < 0.3) attrs.push(kv('service.version', str(`1.${int(9)}`)));
    return { attributes: attrs };
  }

  function traces(): Json {
    const nowNs = BigInt(Date.now() - 30_000) * 1_000_000n;
    const spans = () =>
      Array.from({ length: 1 + int(4) }, (): Json => {
        const start = nowNs - BigInt(int(600_000)) * 1_000_000n;
        const attrs: Json[] = [];
        if (rnd() < 0.6) attrs.push(kv('http.request.method', str(pick(['GET', 'POST']))));
        if (rnd() < 0.6) attrs.push(kv('http.route', str(pick(['/cart', '/pay/{id}']))));
        if (rnd() < 0.3) attrs.push(kv('peer.service', str('db')));
        if (rnd() < 0.3) attrs.push(kv('retries', { intValue: String(int(5)) }));
        if (rnd() < 0.2) attrs.push(kv('tags', { arrayValue: { values: [str('a'), str('b')] } }));
        return {
          traceId: hex(16),
          spanId: hex(8),
          ...(rnd() < 0.5 ? { parentSpanId: hex(8) } : {}),
          name: pick(['GET /cart', 'fsync', 'spawn', 'query']),
          kind: int(6),
          startTimeUnixNano: String(start),
          endTimeUnixNano: String(start + BigInt(1 + int(5e8))),
          attributes: attrs,
        };
      });
    return {
      resourceSpans: Array.from({ length: 1 + int(2) }, () => ({
        resource: resource(),
        scopeSpans: [{ scope: { name: 'fuzz' }, spans: spans() }],
      })),
    };
  }

  function metrics(): Json {
    const nowNs = BigInt(Date.now() - 30_000) * 1_000_000n;
    const explicit = (): Json => ({
      name: pick(['http.server.request.duration', 'rpc.client.duration', 'fsync.latency']),
      unit: pick(['s', 'ms', 'us']),
      histogram: {
        aggregationTemporality: 1 + int(2),
        dataPoints: Array.from({ length: 1 + int(3) }, (): Json => {
          const counts = [int(5), int(9), int(3)];
          const time = nowNs - BigInt(int(300)) * 1_000_000_000n;
          return {
            startTimeUnixNano: String(time - 60_000_000_000n),
            timeUnixNano: String(time),
            count: String(counts.reduce((a, b) => a + b, 0)),
            sum: rnd() * 100,
            bucketCounts: counts.map(String),
            explicitBounds: [0.005, 0.05],
            attributes: [kv('http.route', str('/cart'))],
          };
        }),
      },
    });
    const exponential = (): Json => ({
      name: 'rpc.server.duration',
      unit: 'ms',
      exponentialHistogram: {
        aggregationTemporality: 1,
        dataPoints: [
          {
            timeUnixNano: String(nowNs),
            count: '4',
            scale: int(8),
            zeroCount: '1',
            positive: { offset: int(40) - 20, bucketCounts: ['1', '2'] },
          },
        ],
      },
    });
    return {
      resourceMetrics: [
        {
          resource: resource(),
          scopeMetrics: [
            {
              metrics: Array.from({ length: 1 + int(2) }, () =>
                rnd() < 0.7 ? explicit() : exponential(),
              ),
            },
          ],
        },
      ],
    };
  }

  /** Every (container, key) pair in the tree, to replace or delete one at random. */
  function slots(root: Json): Array<[Json[] | { [k: string]: Json }, string | number]> {
    const out: Array<[Json[] | { [k: string]: Json }, string | number]> = [];
    const todo: Json[] = [root];
    while (todo.length) {
      const v = todo.pop()!;
      if (Array.isArray(v))
        v.forEach((c, i) => {
          out.push([v, i]);
          todo.push(c);
        });
      else if (v && typeof v === 'object')
        for (const [k, c] of Object.entries(v)) {
          out.push([v, k]);
          todo.push(c);
        }
    }
    return out;
  }

  function structured(root: Json, donor: Json): string {
    const all = slots(root);
    if (!all.length) return 'none';
    const r = rnd();
    if (r < 0.6) {
      for (let n = 1 + int(3); n > 0; n--) {
        const [c, k] = pick(all);
        (c as Record<string | number, Json>)[k] = pick(EXTREMES)();
      }
      return 'extreme-value';
    }
    if (r < 0.8) {
      const [c, k] = pick(all);
      const [dc, dk] = pick(slots(donor));
      (c as Record<string | number, Json>)[k] = (dc as Record<string | number, Json>)[dk]!;
      return 'field-splice';
    }
    if (r < 0.9) {
      const [c, k] = pick(all);
      if (Array.isArray(c)) c.splice(k as number, 1);
      else delete c[k];
      return 'field-delete';
    }
    const [c, k] = pick(all);
    const v = (c as Record<string | number, Json>)[k];
    if (Array.isArray(v)) {
      const copies = Array.from({ length: 50 + int(500) }, () => v[int(v.length)] ?? null);
      v.push(...copies);
    }
    return 'array-repeat';
  }

  /** JSON-shaped object to protobuf: hex ids become bytes (protobufjs reads other strings as base64). */
  function toProtobuf(root: Json, codec: typeof TraceRequest): Buffer {
    for (const [c, k] of slots(root)) {
      const v = (c as Record<string | number, Json>)[k];
      if (
        (k === 'traceId' || k === 'spanId' || k === 'parentSpanId') &&
        typeof v === 'string' &&
        /^([0-9a-f]{2})*$/.test(v)
      )
        (c as Record<string, unknown>)[k] = Buffer.from(v, 'hex');
    }
    return Buffer.from(codec.encode(codec.fromObject(root)).finish());
  }

  function encode(root: Json, type: 'json' | 'protobuf', isTraces: boolean): Buffer {
    if (type === 'json') return Buffer.from(JSON.stringify(root), 'utf8');
    return toProtobuf(root, isTraces ? TraceRequest : MetricsRequest);
  }

  function bytes(buf: Buffer, donor: Buffer): [Buffer, string] {
    const r = rnd();
    if (r < 0.4 || buf.length === 0) {
      const out = Buffer.from(buf);
      for (let n = 1 + int(16); n > 0 && out.length; n--) out[int(out.length)]! ^= 1 << int(8);
      return [out, 'bit-flip'];
    }
    if (r < 0.6) return [buf.subarray(0, int(buf.length)), 'truncate'];
    if (r < 0.85) {
      const from = int(donor.length);
      const slice = donor.subarray(from, from + 1 + int(64));
      const at = int(buf.length);
      const cut = rnd() < 0.5 ? slice.length : 0; // overwrite or insert
      return [Buffer.concat([buf.subarray(0, at), slice, buf.subarray(at + cut)]), 'byte-splice'];
    }
    const junk = Buffer.from(Array.from({ length: 1 + int(32) }, () => int(256)));
    const at = int(buf.length);
    return [Buffer.concat([buf.subarray(0, at), junk, buf.subarray(at)]), 'garbage-insert'];
  }

  return () => {
    const isTraces = rnd() < 0.7;
    const type = rnd() < 0.5 ? 'json' : 'protobuf';
    const root = isTraces ? traces() : metrics();
    const donor = rnd() < 0.5 ? traces() : metrics();
    let mutation = 'none';
    let body: Buffer;
    const r = rnd();
    if (r < 0.05) body = encode(root, type, isTraces);
    else if (r < 0.6) {
      mutation = structured(root, donor);
      try {
        body = encode(root, type, isTraces);
      } catch {
        // protobufjs refused to encode the mutant: damage the valid protobuf instead.
        [body, mutation] = bytes(
          encode(isTraces ? traces() : metrics(), type, isTraces),
          Buffer.alloc(0),
        );
      }
    } else {
      const valid = encode(root, type, isTraces);
      let donorBody: Buffer;
      try {
        donorBody = encode(donor, type, !('resourceMetrics' in (donor as object)));
      } catch {
        donorBody = valid;
      }
      [body, mutation] = bytes(valid, donorBody);
    }
    return {
      path: isTraces ? '/v1/traces' : '/v1/metrics',
      type,
      contentType: type === 'json' ? 'application/json' : 'application/x-protobuf',
      body,
      mutation: `${type}:${mutation}`,
    };
  };
}

export interface FuzzTally {
  bodies: number;
  byStatus: Record<string, number>;
  byMutation: Record<string, Record<string, number>>;
  serverErrors: number;
  /** 400s that came from PostgreSQL refusing a value (a check upstream missed it). */
  refusedByDatabase: number;
  partialSuccess: number;
  /** First few 5xx bodies, to reproduce. */
  samples: Array<{ mutation: string; status: number; body: string; response: string }>;
  seconds: number;
}

/** Send `count` bodies from the seeded generator with `concurrency` requests in flight, and tally the answers. */
export async function runOtlpFuzz(opts: {
  otlpUrl: string;
  seed: number;
  count: number;
  concurrency: number;
  headers?: Record<string, string>;
  onProgress?: (done: number) => void;
}): Promise<FuzzTally> {
  const next = otlpFuzzBodies(opts.seed);
  const tally: FuzzTally = {
    bodies: 0,
    byStatus: {},
    byMutation: {},
    serverErrors: 0,
    refusedByDatabase: 0,
    partialSuccess: 0,
    samples: [],
    seconds: 0,
  };
  const started = performance.now();
  let issued = 0;
  const worker = async () => {
    while (issued < opts.count) {
      issued++;
      const b = next();
      let status: number;
      let text: string;
      try {
        const res = await fetch(`${opts.otlpUrl}${b.path}`, {
          method: 'POST',
          headers: { 'content-type': b.contentType, ...opts.headers },
          body: new Uint8Array(b.body),
        });
        status = res.status;
        text = Buffer.from(await res.arrayBuffer()).toString('latin1');
      } catch (err) {
        status = 0; // connection refused, reset or timed out: worse than a 5xx
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        text = `${(err as Error).message}: ${cause?.code ?? ''} ${cause?.message ?? ''}`;
      }
      tally.bodies++;
      tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1;
      const m = (tally.byMutation[b.mutation] ??= {});
      m[status] = (m[status] ?? 0) + 1;
      if (status >= 500 || status === 0) {
        tally.serverErrors++;
        if (tally.samples.length < 5)
          tally.samples.push({
            mutation: b.mutation,
            status,
            body: b.body.subarray(0, 2000).toString('base64'),
            response: text.slice(0, 500),
          });
      }
      if (text.includes('cannot be stored')) tally.refusedByDatabase++;
      // An export response without partialSuccess is `{}` in JSON and empty in protobuf.
      if (
        status === 200 &&
        (text.includes('partialSuccess') || (b.type === 'protobuf' && text.length))
      )
        tally.partialSuccess++;
      if (tally.bodies % 1000 === 0) opts.onProgress?.(tally.bodies);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  tally.seconds = (performance.now() - started) / 1000;
  return tally;
}
