/**
 * Load generator for bench/ingest, run as its own process: POSTs pre-encoded
 * OTLP protobuf batches of 200 spans (loads.ts: the realistic or the friendly
 * load) with `concurrency` requests in flight, patching a counter into every
 * trace id and span id so no span is a duplicate. After `warmup` seconds of
 * load it prints `warm` (the bench starts measuring CPU there) and counts the
 * next `seconds`; prints one JSON line with its totals when done.
 */
import http from 'node:http';
import { loadShape, templates as makeTemplates } from './loads.ts';

const [url, secondsArg, concurrencyArg, batchArg, shapeArg, warmupArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 30);
const warmup = Number(warmupArg ?? 0);
const concurrency = Number(concurrencyArg ?? 8);
const batchSize = Number(batchArg ?? 200);
const templates = makeTemplates(loadShape(shapeArg), batchSize);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(`${url}/v1/traces`);
let counter = 0;
let sent = 0;
let failed = 0;
/** Spans acknowledged, warm-up included (what must be stored). */
let acknowledged = 0;
const latencies: number[] = [];
const warmEnd = Date.now() + warmup * 1000;
const deadline = warmEnd + seconds * 1000;
let warm = false;

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
    for (const off of t.traceAt) {
      buf.writeUInt32BE(n, off);
      buf.writeUInt16BE(process.pid & 0xffff, off + 4);
    }
    for (const off of t.spanAt) buf.writeUInt32BE(n, off);
    const t0 = performance.now();
    const status = await post(buf);
    if (status === 200) acknowledged += batchSize;
    if (!warm) continue;
    latencies.push(performance.now() - t0);
    if (status === 200) sent += batchSize;
    else failed++;
  }
}

let started = performance.now();
setTimeout(() => {
  warm = true;
  started = performance.now();
  process.stdout.write('warm\n');
}, warmup * 1000);
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsed = (performance.now() - started) / 1000;
process.stdout.write(
  JSON.stringify({
    spans: sent,
    acknowledged,
    failedRequests: failed,
    seconds: elapsed,
    latencies,
  }) + '\n',
);
agent.destroy();
