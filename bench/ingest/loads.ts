/**
 * The loads bench/ingest can send, as pre-encoded OTLP protobuf bodies with the
 * places to patch so that no span repeats (loadgen.ts patches a request counter
 * into every trace id and span id):
 *
 * - `realistic` (the default): what a Collector's batch of exports looks like.
 *   20 services × 10 hosts, several resources per body (each its own
 *   ResourceSpans, as the batch processor merges them), many traces per body,
 *   ~55 % SERVER request spans over 3 routes per service (half of them with a
 *   remote parent) and ~45 % INTERNAL spawn/fsync/unmount children,
 *   lognormal durations, every span id unique, spans ended 1 s–3.5 min before
 *   the generator started (up to ~4 min by the end of a 30 s run).
 * - `friendly`: the earlier load, kept for comparison: one trace and one
 *   resource per body, four services, durations on a fixed ladder.
 */
import { TraceRequest } from '@onset/server/internals';
import { mulberry32Open } from '@onset/testkit/random';

export type LoadShape = 'realistic' | 'friendly';

export function loadShape(v: string | undefined): LoadShape {
  if (v === undefined || v === '' || v === 'realistic') return 'realistic';
  if (v === 'friendly') return 'friendly';
  throw new Error(`BENCH_LOAD=${v}: want realistic or friendly`);
}

/** 16-byte trace id of the friendly load; its last 8 bytes end every trace id of both loads. */
export const MARK = Buffer.from('0nsetTRACEm4rk!!');
export const MARK_TAIL = MARK.subarray(8);
/** First 4 bytes of every span id (and remote parent id) in a realistic template: patched per request. */
const SPAN_TAG = Buffer.from([0xa5, 0x5a, 0xc3, 0x3c]);

const REALISTIC_SERVICES = Array.from(
  { length: 20 },
  (_, i) => `svc-${String(i).padStart(2, '0')}`,
);
const FRIENDLY_SERVICES = ['checkout', 'urlite', 'pageserver', 'walredo'];

/** The services a load's spans belong to (the bench counts their histograms). */
export function loadServices(shape: LoadShape): string[] {
  return shape === 'realistic' ? REALISTIC_SERVICES : FRIENDLY_SERVICES;
}

/**
 * One encoded body and where to patch it: `traceAt` are offsets of trace ids
 * (their first 4 bytes get the request counter, the next 2 the generator's pid),
 * `spanAt` offsets of span and parent ids (first 4 bytes: the request counter).
 */
export interface Template {
  buf: Buffer;
  traceAt: number[];
  spanAt: number[];
  spans: number;
}

export function templates(shape: LoadShape, batch: number, nowMs = Date.now()): Template[] {
  return shape === 'realistic'
    ? Array.from({ length: 64 }, (_, v) => realisticTemplate(v, batch, nowMs))
    : Array.from({ length: 16 }, (_, v) => friendlyTemplate(v, batch, nowMs));
}

const kv = (key: string, v: string | number) =>
  typeof v === 'string' ? { key, value: { stringValue: v } } : { key, value: { intValue: v } };

const nanos = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

function offsetsOf(buf: Buffer, needle: Buffer, back: number): number[] {
  const out: number[] = [];
  for (let at = buf.indexOf(needle); at >= 0; at = buf.indexOf(needle, at + needle.length))
    out.push(at - back);
  return out;
}

function realisticTemplate(variant: number, batch: number, nowMs: number): Template {
  const rnd = mulberry32Open(0x0a5e7 + variant * 7919);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const normal = () => Math.sqrt(-2 * Math.log(rnd())) * Math.cos(2 * Math.PI * rnd());
  const lognormalMs = (medianMs: number, sigma: number) => medianMs * Math.exp(sigma * normal());
  let spanIndex = 0;
  const spanId = () => {
    const b = Buffer.alloc(8);
    SPAN_TAG.copy(b, 0);
    b.writeUInt32BE(++spanIndex, 4);
    return b;
  };
  let traceIndex = 0;
  const traceId = () => {
    const b = Buffer.alloc(16);
    b.writeUInt16BE(++traceIndex, 6);
    MARK_TAIL.copy(b, 8);
    return b;
  };

  // 4-8 resources per body, each a (service, host) of the fleet's 200.
  const resourceCount = 4 + Math.floor(rnd() * 5);
  const resources = new Map<string, { service: number; host: number }>();
  while (resources.size < resourceCount) {
    const service = Math.floor(rnd() * REALISTIC_SERVICES.length);
    const host = Math.floor(rnd() * 10);
    resources.set(`${service}/${host}`, { service, host });
  }
  const blocks = [...resources.values()].map((r) => ({ ...r, spans: [] as object[] }));
  let left = batch;
  let children = 0;
  while (left > 0) {
    const block = pick(blocks);
    const svc = REALISTIC_SERVICES[block.service]!;
    const trace = traceId();
    // A request that ended 1 s - 3.5 min ago, and its internal work.
    const durMs = Math.min(lognormalMs(25, 0.9), 30_000);
    const endMs = nowMs - 1000 - rnd() * 209_000;
    const startMs = endMs - durMs;
    const server = spanId();
    const route = pick(['/api/orders/{id}', '/api/cart', '/healthz'] as const);
    const method = route === '/api/cart' ? 'POST' : 'GET';
    const status = rnd() < 0.02 ? 500 : 200;
    block.spans.push({
      traceId: trace,
      spanId: server,
      parentSpanId: rnd() < 0.5 ? spanId() : undefined,
      name: `${method} ${route}`,
      kind: 2,
      startTimeUnixNano: nanos(startMs),
      endTimeUnixNano: nanos(endMs),
      attributes: [
        kv('http.request.method', method),
        kv('http.route', route),
        kv('http.response.status_code', status),
        kv('url.scheme', 'http'),
        kv('server.address', `${svc}.internal`),
        kv('network.protocol.version', '1.1'),
      ],
      status: status >= 500 ? { code: 2 } : {},
    });
    left--;
    // 0-2 internal children: ~45 % of all spans.
    const n = Math.min(left, rnd() < 0.18 ? 0 : rnd() < 0.55 ? 1 : 2);
    children += n;
    for (let c = 0; c < n; c++) {
      const op = pick(['spawn', 'fsync', 'unmount'] as const);
      const childMs = Math.min(lognormalMs(op === 'fsync' ? 3 : 8, 1.1), durMs);
      const childStart = startMs + rnd() * (durMs - childMs);
      block.spans.push({
        traceId: trace,
        spanId: spanId(),
        parentSpanId: server, // one more tagged id in the body
        name: op,
        kind: 1,
        startTimeUnixNano: nanos(childStart),
        endTimeUnixNano: nanos(childStart + childMs),
        attributes:
          op === 'spawn'
            ? [kv('process.executable.name', pick(['git', 'tar', 'pg_dump'] as const))]
            : op === 'fsync'
              ? [kv('file.directory', '/var/lib/app/wal')]
              : [kv('fs.mountpoint', '/mnt/scratch')],
      });
      left--;
    }
  }
  const msg = TraceRequest.fromObject({
    resourceSpans: blocks
      .filter((b) => b.spans.length)
      .map((b) => {
        const svc = REALISTIC_SERVICES[b.service]!;
        return {
          resource: {
            attributes: [
              kv('service.name', svc),
              kv('service.version', `1.${b.service % 3}.0`),
              kv('service.instance.id', `${svc}-node-${b.host}`),
              kv('host.name', `node-${b.host}`),
              kv('host.arch', 'amd64'),
              kv('os.type', 'linux'),
              kv('os.version', b.host % 2 ? '6.1.0-18' : '5.15.0-91'),
              kv('deployment.environment', 'production'),
              kv('telemetry.sdk.name', 'opentelemetry'),
              kv('telemetry.sdk.language', 'go'),
              kv('telemetry.sdk.version', '1.24.0'),
            ],
          },
          scopeSpans: [{ scope: { name: `${svc}/http`, version: '0.49.0' }, spans: b.spans }],
        };
      }),
  });
  const buf = Buffer.from(TraceRequest.encode(msg).finish());
  const traceAt = offsetsOf(buf, MARK_TAIL, 8);
  const spanAt = offsetsOf(buf, SPAN_TAG, 0);
  if (traceAt.length !== batch || spanAt.length !== spanIndex + children)
    throw new Error(`template ${variant}: a patch marker also occurs outside an id`);
  return { buf, traceAt, spanAt, spans: batch };
}

function friendlyTemplate(variant: number, batch: number, nowMs: number): Template {
  const now = BigInt(nowMs) * 1_000_000n;
  const spans = Array.from({ length: batch }, (_, i) => {
    const dur = BigInt(Math.round(200_000 * Math.exp((i % 37) / 6))); // 0.2 ms .. ~80 ms
    const start = now - BigInt(i) * 1_000_000n;
    const spanId = Buffer.alloc(8);
    spanId.writeUInt32BE(i + 1, 4);
    return {
      traceId: MARK,
      spanId,
      name: i % 4 === 0 ? 'fsync' : 'GET',
      kind: i % 2 ? 2 : 3,
      startTimeUnixNano: start.toString(),
      endTimeUnixNano: (start + dur).toString(),
      attributes:
        i % 4 === 0
          ? [{ key: 'file.directory', value: { stringValue: '/var/lib/pg/wal' } }]
          : [
              { key: 'http.request.method', value: { stringValue: 'GET' } },
              { key: 'http.route', value: { stringValue: `/api/${i % 5}` } },
              { key: 'server.address', value: { stringValue: 'urlite' } },
            ],
    };
  });
  const msg = TraceRequest.fromObject({
    resourceSpans: [
      {
        resource: {
          attributes: [
            kv('service.name', FRIENDLY_SERVICES[variant % FRIENDLY_SERVICES.length]!),
            kv('host.name', `node-${variant % 8}`),
            kv('os.version', variant % 2 ? '4.15.0-36' : '4.4.0-138'),
          ],
        },
        scopeSpans: [{ spans }],
      },
    ],
  });
  const buf = Buffer.from(TraceRequest.encode(msg).finish());
  // One trace per body: the counter goes into the trace id, span ids repeat across bodies.
  return { buf, traceAt: offsetsOf(buf, MARK_TAIL, 8), spanAt: [], spans: batch };
}
