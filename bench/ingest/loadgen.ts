/**
 * Load generator for bench/ingest, run as its own process: POSTs pre-encoded
 * OTLP protobuf batches of 200 spans with `concurrency` requests in flight,
 * patching a counter into every trace id so no span is a duplicate.
 * Prints one JSON line with its totals when done.
 */
import { TraceRequest } from '@onset/server/internals';
import http from 'node:http';

const [url, secondsArg, concurrencyArg, batchArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 30);
const concurrency = Number(concurrencyArg ?? 8);
const batchSize = Number(batchArg ?? 200);
const MARK = Buffer.from('0nsetTRACEm4rk!!'); // 16-byte trace id, easy to find in the encoding

function template(variant: number): { buf: Buffer; offsets: number[] } {
  const now = BigInt(Date.now()) * 1_000_000n;
  const services = ['checkout', 'urlite', 'pageserver', 'walredo'];
  const spans = Array.from({ length: batchSize }, (_, i) => {
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
            { key: 'service.name', value: { stringValue: services[variant % services.length] } },
            { key: 'host.name', value: { stringValue: `node-${variant % 8}` } },
            { key: 'os.version', value: { stringValue: variant % 2 ? '4.15.0-36' : '4.4.0-138' } },
          ],
        },
        scopeSpans: [{ spans }],
      },
    ],
  });
  const buf = Buffer.from(TraceRequest.encode(msg).finish());
  const offsets: number[] = [];
  for (let at = buf.indexOf(MARK); at >= 0; at = buf.indexOf(MARK, at + 16)) offsets.push(at);
  return { buf, offsets };
}

const templates = Array.from({ length: 16 }, (_, v) => template(v));
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(`${url}/v1/traces`);
let counter = 0;
let sent = 0;
let failed = 0;
const latencies: number[] = [];
const deadline = Date.now() + seconds * 1000;

function post(body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

async function worker(): Promise<void> {
  while (Date.now() < deadline) {
    const t = templates[counter % templates.length]!;
    const buf = Buffer.from(t.buf);
    const n = ++counter;
    for (const off of t.offsets) {
      buf.writeUInt32BE(n, off);
      buf.writeUInt32BE(process.pid, off + 4);
    }
    const t0 = performance.now();
    const status = await post(buf);
    latencies.push(performance.now() - t0);
    if (status === 200) sent += batchSize;
    else failed++;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsed = (performance.now() - started) / 1000;
process.stdout.write(
  JSON.stringify({ spans: sent, failedRequests: failed, seconds: elapsed, latencies }) + '\n',
);
agent.destroy();
