/**
 * Spans shaped as the official auto-instrumentations send them (issue 34), exported through the
 * real OTel JS SDK: Python's `requests` (CLIENT `GET`, old conventions, only `http.url` with the
 * concrete id), Go's `otelhttp` (CLIENT `HTTP GET`, `server.address` an IP), a Java agent 2.x
 * server (new conventions, `http.route`). Pair first, then classify: a caller's series whose calls
 * pair is the edge's client view, named after the callee; a call that never pairs (an external
 * API) keeps a series of its own, with the peer from its URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { context, SpanKind, trace, type Attributes, type Span } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Series } from '@onset/contract';

/** One service's SDK pipeline; spans are exported when the test says so. */
function sdk(server: TestServer, service: string, host: string) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': host }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` }), {
        maxExportBatchSize: 1000,
        maxQueueSize: 10_000,
      }),
    ],
  });
  const tracer = provider.getTracer('auto-instrumentation');
  return {
    span(name: string, kind: SpanKind, startMs: number, attributes: Attributes, parent?: Span) {
      const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
      return tracer.startSpan(name, { kind, startTime: startMs, attributes }, ctx);
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

interface Call {
  /** The caller's span (ended once the callee answered). */
  client: Span;
  clientEndMs: number;
  /** The callee's span, or null for a call to something without an agent. */
  server: Span | null;
  serverEndMs: number;
}

/** web (Python requests) -> api (Go otelhttp) -> store (Java agent), and web -> an external API. */
function traffic(server: TestServer, startMs: number, calls: number) {
  const web = sdk(server, 'web', 'web-1');
  const api = sdk(server, 'api', 'api-1');
  const store = sdk(server, 'store', 'store-1');
  const webToApi: Call[] = [];
  const apiToStore: Call[] = [];
  const external: Call[] = [];
  for (let i = 0; i < calls; i++) {
    const t = startMs + i * 1000;
    const id = 1000 + i;
    // Python requests 2.x instrumentation, default (old) conventions.
    const c1 = web.span('GET', SpanKind.CLIENT, t, {
      'http.method': 'GET',
      'http.url': `http://127.0.0.1:8081/items/${id}`,
      'http.status_code': 200,
    });
    // The Go service's otelhttp server span, then its client span to the Java service.
    const s1 = api.span(
      'GET /items/{id}',
      SpanKind.SERVER,
      t + 1,
      {
        'http.request.method': 'GET',
        'http.route': '/items/{id}',
        'url.path': `/items/${id}`,
        'http.response.status_code': 200,
      },
      c1,
    );
    const c2 = api.span(
      'HTTP GET',
      SpanKind.CLIENT,
      t + 2,
      {
        'http.request.method': 'GET',
        'url.full': `http://127.0.0.1:8082/stock/${id}`,
        'server.address': '127.0.0.1',
        'server.port': 8082,
        'http.response.status_code': 200,
      },
      s1,
    );
    // Java agent 2.x server span: new conventions, the route template.
    const s2 = store.span(
      'GET /stock/{sku}',
      SpanKind.SERVER,
      t + 3,
      {
        'http.request.method': 'GET',
        'http.route': '/stock/{sku}',
        'url.path': `/stock/${id}`,
        'server.address': '127.0.0.1',
        'server.port': 8082,
        'http.response.status_code': 200,
      },
      c2,
    );
    apiToStore.push({ client: c2, clientEndMs: t + 10, server: s2, serverEndMs: t + 7 });
    webToApi.push({ client: c1, clientEndMs: t + 14, server: s1, serverEndMs: t + 12 });
    // The same caller, an API nobody here instruments.
    const c3 = web.span('POST', SpanKind.CLIENT, t + 20, {
      'http.method': 'POST',
      'http.url': `https://payments.example.com/v1/charges/${id}?expand=card`,
      'http.status_code': 201,
    });
    external.push({ client: c3, clientEndMs: t + 60, server: null, serverEndMs: 0 });
  }
  return {
    /** End and export the callers' spans, or the callees' (each side its own exports). */
    async send(side: 'callers' | 'callees') {
      const all = [...webToApi, ...apiToStore, ...external];
      for (const k of all) {
        if (side === 'callers') k.client.end(k.clientEndMs);
        else k.server?.end(k.serverEndMs);
      }
      await Promise.all([web.flush(), api.flush(), store.flush()]);
    },
    async close() {
      await Promise.all([web.shutdown(), api.shutdown(), store.shutdown()]);
    },
  };
}

async function listSeries(server: TestServer, service: string): Promise<Series[]> {
  const res = await fetch(`${server.url}/api/v1/series?service=${service}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { series: Series[] }).series;
}

async function count(server: TestServer, id: string): Promise<number> {
  const res = await fetch(`${server.url}/api/v1/series/${id}/quantiles?from=now-2h&step=1d&q=0.5`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { points: Array<{ count: number }> };
  return body.points.reduce((a, p) => a + p.count, 0);
}

async function detect(server: TestServer) {
  const res = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBeLessThan(300);
}

const labels = (s: Series) => `${s.view} ${s.name} -> ${s.peer ?? ''}`;

for (const order of ['callees first', 'callers first'] as const) {
  describe(`SDK span shapes, ${order}: pair first, then classify`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer();
    });
    afterAll(async () => {
      await server?.close();
    });

    it('names each caller series after its paired callee, keeps the external API with its URL host, and counts each call once', async () => {
      const calls = 40;
      const first = traffic(server, Date.now() - 20 * 60_000, calls);
      const sides =
        order === 'callees first'
          ? (['callees', 'callers'] as const)
          : (['callers', 'callees'] as const);
      for (const side of sides) await first.send(side);
      await first.close();
      await detect(server);

      const web = await listSeries(server, 'web');
      const api = await listSeries(server, 'api');
      for (const s of [...web, ...api]) expect(s.name).not.toMatch(/^(HTTP )?(GET|POST)$/);
      // web's own client series of the paired call is folded into the edge: no `GET /items/{id}`
      // to 127.0.0.1 beside the edge's views.
      expect(
        web
          .filter((s) => s.view === 'client')
          .map(labels)
          .sort(),
      ).toEqual([
        'client GET /items/{id} -> api',
        'client POST /v1/charges/{id} -> payments.example.com',
      ]);
      expect(web.filter((s) => s.view === 'gap').map(labels)).toEqual([
        'gap GET /items/{id} -> api',
      ]);
      // Go's `HTTP GET` to 127.0.0.1 is the api -> store edge, named by the Java route.
      expect(api.filter((s) => s.view === 'client').map(labels)).toEqual([
        'client GET /stock/{sku} -> store',
      ]);
      expect(api.some((s) => s.peer === '127.0.0.1')).toBe(false);

      const byLabel = (list: Series[], l: string) => list.find((s) => labels(s) === l)!;
      expect(await count(server, byLabel(web, 'client GET /items/{id} -> api').id)).toBe(calls);
      expect(await count(server, byLabel(web, 'gap GET /items/{id} -> api').id)).toBe(calls);
      expect(await count(server, byLabel(api, 'client GET /stock/{sku} -> store').id)).toBe(calls);
      expect(
        await count(
          server,
          byLabel(web, 'client POST /v1/charges/{id} -> payments.example.com').id,
        ),
      ).toBe(calls);

      // Later calls land in the edge's client view straight from ingest, and still count once.
      const more = traffic(server, Date.now() - 10 * 60_000, calls);
      for (const side of sides) await more.send(side);
      await more.close();
      await detect(server);
      const after = await listSeries(server, 'web');
      expect(
        after
          .filter((s) => s.view === 'client')
          .map(labels)
          .sort(),
      ).toEqual([
        'client GET /items/{id} -> api',
        'client POST /v1/charges/{id} -> payments.example.com',
      ]);
      expect(await count(server, byLabel(after, 'client GET /items/{id} -> api').id)).toBe(
        2 * calls,
      );
      expect(await count(server, byLabel(after, 'gap GET /items/{id} -> api').id)).toBe(2 * calls);
      const apiAfter = await listSeries(server, 'api');
      expect(await count(server, byLabel(apiAfter, 'client GET /stock/{sku} -> store').id)).toBe(
        2 * calls,
      );

      // The overview counts the callers' own calls once each: web made 2 × calls of each kind.
      const arriving = (await (
        await fetch(`${server.url}/api/v1/arriving?from=now-1h`)
      ).json()) as { services: Array<{ service: string; calls: number }> };
      expect(arriving.services.find((s) => s.service === 'web')!.calls).toBe(4 * calls);

      // Detection watches the edge's views, never the folded caller series beside them.
      const { rows: watched } = await server.onset.pool.query<{ folded: boolean; n: number }>(
        `SELECT COALESCE(s.folded_into, 0) > 0 AS folded, count(*)::int AS n
           FROM regress_state r JOIN series s ON s.id = r.series_id GROUP BY 1`,
      );
      expect(watched.find((r) => r.folded)).toBeUndefined();
      expect(watched.find((r) => !r.folded)?.n).toBeGreaterThanOrEqual(web.length + api.length);
    });

    it('never folds a caller series whose calls reach two services behind one address: a client view per edge, and its own series stays', async () => {
      const gateway = sdk(server, 'gateway', 'gw-1');
      const callees = {
        left: sdk(server, 'left', 'left-1'),
        right: sdk(server, 'right', 'right-1'),
      };
      const t0 = Date.now() - 15 * 60_000;
      const calls = 10;
      for (let i = 0; i < calls; i++)
        for (const [k, callee] of Object.entries(callees)) {
          const t = t0 + i * 1000 + (k === 'left' ? 0 : 500);
          const c = gateway.span('HTTP GET', SpanKind.CLIENT, t, {
            'http.request.method': 'GET',
            'url.full': `http://lb.internal/health`,
            'server.address': 'lb.internal',
          });
          callee
            .span(
              'GET /health',
              SpanKind.SERVER,
              t + 1,
              { 'http.request.method': 'GET', 'http.route': '/health' },
              c,
            )
            .end(t + 3);
          c.end(t + 5);
        }
      await Promise.all([gateway.flush(), callees.left.flush(), callees.right.flush()]);
      await Promise.all([gateway.shutdown(), callees.left.shutdown(), callees.right.shutdown()]);
      await detect(server);
      const list = await listSeries(server, 'gateway');
      expect(
        list
          .filter((s) => s.view === 'client')
          .map(labels)
          .sort(),
      ).toEqual([
        'client GET /health -> lb.internal',
        'client GET /health -> left',
        'client GET /health -> right',
      ]);
      const byLabel = (l: string) => list.find((s) => labels(s) === l)!;
      expect(await count(server, byLabel('client GET /health -> lb.internal').id)).toBe(2 * calls);
      expect(await count(server, byLabel('client GET /health -> left').id)).toBe(calls);
      expect(await count(server, byLabel('client GET /health -> right').id)).toBe(calls);
    });
  });
}
