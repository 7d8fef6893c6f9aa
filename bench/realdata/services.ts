/**
 * node --import tsx bench/realdata/services.ts [--otlp URL] [--port 18501]
 *
 * A real OTel-SDK-instrumented service pair on loopback for recordings
 * (README in apps/server/test/fixtures/recordings): `rec-frontend`
 * (GET /checkout) calls `rec-backend` (GET /price, which hashes 1 MB and
 * writes a small file, every tenth with an fsync), both exporting SERVER
 * and CLIENT spans with W3C trace context over OTLP/HTTP protobuf. A load
 * generator sends 1-12 requests a second, a new rate every 5 minutes,
 * bounded (at most 4 sockets). Nothing in it changes on purpose: every
 * regression opened on what it records is a false alarm.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const { values: args } = parseArgs({
  options: {
    otlp: { type: 'string', default: 'http://127.0.0.1:4318/v1/traces' },
    port: { type: 'string', default: '18501' },
  },
});
const FRONT = Number(args.port);
const BACK = FRONT + 1;

propagation.setGlobalPropagator(new W3CTraceContextPropagator());
function tracerFor(name: string): Tracer {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': name, 'host.name': os.hostname() }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: args.otlp }), {
        scheduledDelayMillis: 2000,
      }),
    ],
  });
  return provider.getTracer(name);
}
const frontTracer = tracerFor('rec-frontend');
const backTracer = tracerFor('rec-backend');
const blob = crypto.randomBytes(256 * 1024);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'onset-rec-services-'));

type Handler = (ctx: Context, res: http.ServerResponse, end: () => void) => void;
function serve(tracer: Tracer, port: number, route: string, handler: Handler): void {
  http
    .createServer((req, res) => {
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(
        `${req.method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': req.method, 'url.path': route },
        },
        parent,
      );
      handler(trace.setSpan(parent, span), res, () => span.end());
    })
    .listen(port, '127.0.0.1');
}

let served = 0;
serve(backTracer, BACK, '/price', (_ctx, res, end) => {
  const h = crypto.createHash('sha256');
  for (let i = 0; i < 4; i++) h.update(blob);
  const digest = h.digest('hex');
  const file = path.join(dir, `p${served++ % 16}`);
  const done = () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ digest }));
    end();
  };
  fs.writeFile(file, digest, () => {
    if (served % 10 !== 0) return done();
    fs.open(file, 'r+', (err, fd) => {
      if (err) return done();
      fs.fsync(fd, () => fs.close(fd, done));
    });
  });
});

function callBackend(ctx: Context, cb: (body: string) => void): void {
  const span = frontTracer.startSpan(
    'GET /price',
    { kind: SpanKind.CLIENT, attributes: { 'server.address': '127.0.0.1', 'server.port': BACK } },
    ctx,
  );
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(ctx, span), headers);
  http
    .get({ host: '127.0.0.1', port: BACK, path: '/price', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        span.setAttribute('http.response.status_code', res.statusCode ?? 0);
        span.end();
        cb(body);
      });
    })
    .on('error', () => {
      span.end();
      cb('');
    });
}
serve(frontTracer, FRONT, '/checkout', (ctx, res, end) =>
  callBackend(ctx, (body) => {
    const digest = body ? (JSON.parse(body) as { digest?: string }).digest : '';
    res.writeHead(200);
    res.end(JSON.stringify({ ok: true, d: (digest ?? '').slice(0, 8) }));
    end();
  }),
);

// The load: 1-12 requests a second, a new rate every 5 minutes.
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let rate = 3;
setInterval(() => (rate = 1 + Math.floor(Math.random() * 12)), 5 * 60_000);
setInterval(() => {
  for (let i = 0; i < rate; i++)
    setTimeout(
      () =>
        http
          .get({ host: '127.0.0.1', port: FRONT, path: '/checkout', agent }, (r) => r.resume())
          .on('error', () => {}),
      Math.random() * 1000,
    );
}, 1000);
const stop = () => {
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
console.log(`rec-frontend on ${FRONT}, rec-backend on ${BACK}, exporting to ${args.otlp}`);
