/**
 * bench/classify: what classifying a span costs (@onset/core classifySpan, run per span at
 * ingest) for the shapes the official SDKs send (issue 34): our own clients (route and
 * server.address), Python requests (`GET`, only http.url with an id), Go otelhttp (`HTTP GET`,
 * url.full), a Java agent server (route, url.path). Prints ns per span (median of 7 rounds of
 * 100,000 spans each, ids all different) and writes bench/results/classify.json.
 *
 *   node --import tsx bench/classify/run.ts
 */
import { classifySpan, SpanKind, type Attributes } from '@onset/core';
import { percentile, writeResult } from '../lib/harness.ts';

const SPANS = 100_000;
const ROUNDS = 7;
const resource = { service: 'web', host: 'web-1', attrs: {} };

const shapes: Record<
  string,
  (i: number) => { name: string; kind: number; attributes: Attributes }
> = {
  'own client (route, server.address)': () => ({
    name: 'GET /items/{id}',
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': 'GET',
      'http.route': '/items/{id}',
      'server.address': 'api',
    },
  }),
  'python requests (GET, http.url)': (i) => ({
    name: 'GET',
    kind: SpanKind.CLIENT,
    attributes: {
      'http.method': 'GET',
      'http.url': `http://127.0.0.1:42281/items/${i}`,
      'http.status_code': 200,
    },
  }),
  'go otelhttp (HTTP GET, url.full)': (i) => ({
    name: 'HTTP GET',
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': 'GET',
      'url.full': `http://127.0.0.1:41965/stock/${i}`,
      'server.address': '127.0.0.1',
      'server.port': 41965,
    },
  }),
  'java agent server (route)': (i) => ({
    name: 'GET /stock/',
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': 'GET',
      'http.route': '/stock/',
      'url.path': `/stock/${i}`,
    },
  }),
  'go server (name with pattern, no route)': (i) => ({
    name: 'GET /items/{id}',
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'GET', 'url.path': `/items/${i}` },
  }),
};

const results: Array<{ shape: string; ns_per_span: number }> = [];
for (const [shape, make] of Object.entries(shapes)) {
  const spans = Array.from({ length: SPANS }, (_, i) => make(i));
  const rounds: number[] = [];
  let names = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (const s of spans) names += classifySpan(s, resource).name.length;
    rounds.push(Number(process.hrtime.bigint() - t) / SPANS);
  }
  if (!names) throw new Error('no names');
  results.push({ shape, ns_per_span: Math.round(percentile(rounds, 0.5)) });
}
console.table(results);
console.log(`wrote ${await writeResult('classify', { spans: SPANS, rounds: ROUNDS, results })}`);
