/**
 * Two HTTP services on loopback instrumented with the OpenTelemetry JS SDK
 * (incident 4), one process each:
 *
 *   node http-pair.cjs callee OTLP_BASE   (bundled by the test: helpers/compile.ts)
 *     serves GET /lookup (a few ms of work) on a loopback port, prints "port N".
 *     On "nagle" (a line on stdin) it starts writing the header and the body
 *     separately with Nagle's algorithm on (as hyper 0.13 did), prints
 *     "switched <epoch ms>"; its own spans stay flat.
 *   node http-pair.cjs caller OTLP_BASE PORT INTERVAL_MS
 *     calls it in a loop over one keep-alive connection, prints "ready".
 *
 * Spans: the callee's SERVER span, the caller's CLIENT span whose context the
 * callee extracts from traceparent, so Onset pairs them into one edge. Both
 * print "stat <calls> <median ms>" of their own view once a second.
 */
import http from 'node:http';
import os from 'node:os';
import { context, propagation, SpanKind, trace, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const [role, otlp, ...rest] = process.argv.slice(2);
const service = role === 'callee' ? 'live-callee' : 'live-caller';
const provider = new BasicTracerProvider({
  // The host's own name, as the SDK's host detector gives it: the agents on this host report under it.
  resource: resourceFromAttributes({ 'service.name': service, 'host.name': os.hostname() }),
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: `${otlp}/v1/traces` }), {
      // Test time runs ~30x faster: export about as often, relative to a minute, as the default 5 s does.
      scheduledDelayMillis: 200,
      maxQueueSize: 65_536,
      maxExportBatchSize: 2_048,
    }),
  ],
});
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const tracer = provider.getTracer('live-http-pair');
process.stdout.on('error', () => {});

/** Once a second: calls and the median of this side's own durations. */
const durations: number[] = [];
setInterval(() => {
  const xs = durations.splice(0).sort((a, b) => a - b);
  console.log(`stat ${xs.length} ${xs.length ? xs[xs.length >> 1]!.toFixed(2) : 0}`);
}, 1000).unref();

const BODY = JSON.stringify({ url: 'https://example.org/a/long/path', hits: 42 });

function callee(): void {
  let nagle = false;
  const server = http.createServer((req, res) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      'GET /lookup',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': 'GET',
          'http.route': '/lookup',
          'url.path': '/lookup',
        },
      },
      parent,
    );
    const t0 = performance.now();
    // A few ms of work with a long tail, like a lookup against a cache and sometimes a store.
    const work = Math.random() < 0.05 ? 8 + Math.random() * 12 : 1 + Math.random() * 2;
    setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      if (nagle) {
        // Header and body in two writes; Nagle holds the second until the first is ACKed.
        req.socket.setNoDelay(false);
        res.writeHead(200, { 'content-length': Buffer.byteLength(BODY) });
        res.flushHeaders();
        setImmediate(() => res.end(BODY));
      } else {
        res.end(BODY);
      }
      span.setAttribute('http.response.status_code', 200);
      span.end();
      durations.push(performance.now() - t0);
    }, work);
  });
  server.listen(0, '127.0.0.1', () => {
    console.log(`port ${(server.address() as { port: number }).port}`);
  });
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d: string) => {
    if (d.includes('nagle') && !nagle) {
      nagle = true;
      console.log(`switched ${Date.now()}`);
    }
  });
  process.stdin.on('end', () => process.exit(0));
}

function caller(port: number, intervalMs: number): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<void>((resolve) => {
      const span: Span = tracer.startSpan('GET /lookup', {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'GET',
          'url.template': '/lookup',
          // Who is called, as instrumented callers say it: Onset's peer for this client series.
          'peer.service': 'live-callee',
          'server.address': '127.0.0.1',
          'server.port': port,
          'url.full': `http://127.0.0.1:${port}/lookup`,
        },
      });
      const headers: Record<string, string> = {};
      propagation.inject(trace.setSpan(context.active(), span), headers);
      const t0 = performance.now();
      const req = http.get({ host: '127.0.0.1', port, path: '/lookup', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          span.setAttribute('http.response.status_code', res.statusCode ?? 0);
          span.end();
          durations.push(performance.now() - t0);
          resolve();
        });
      });
      req.on('error', (err) => {
        span.recordException(err);
        span.end();
        resolve();
      });
    });
  console.log('ready');
  void (async () => {
    for (;;) {
      await once();
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

if (role === 'callee') callee();
else if (role === 'caller') caller(Number(rest[0]), Number(rest[1] ?? 5));
else {
  console.error('usage: http-pair.ts callee OTLP_BASE | caller OTLP_BASE PORT [INTERVAL_MS]');
  process.exit(2);
}
