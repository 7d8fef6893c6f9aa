/**
 * Drill-down reads (api.md "Traces" and "Comparing a selection") through a real server on the
 * embedded PostgreSQL, from spans the official OTel SDK exported as OTLP protobuf:
 * GET /api/v1/traces/{trace_id} answers a trace's stored spans with the durations, kinds,
 * services, hosts and attributes that were sent; GET /api/v1/series/{id}/compare splits a
 * window's calls by a time range and by a latency band and ranks the attribute values of the
 * selection against the rest, with the counts that were sent. Bad input is a clear 400/404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { context, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { SelectionCompare, Series, SeriesList, Trace } from '@onset/contract';

const TEMPLATE = 'http://jaeger.example:16686/trace/{trace_id}?uiFind={span_id}';
const MIN = 60_000;
let s: TestServer;

/** What was sent, per call: the trace, its spans' durations and the caller's host and flag. */
interface Sent {
  traceId: string;
  serverSpanId: string;
  clientSpanId: string;
  calleeSpanId: string;
  startMs: number;
  host: string;
  flag: string;
  serverMs: number;
  clientMs: number;
  calleeMs: number;
}
const sent: Sent[] = [];
/** The window: 40 minutes, ending at a whole minute a little before now. */
const endMs = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
const startMs = endMs - 40 * MIN;
/** The slow period: the last 10 minutes, where shop-2's calls with the new flag take 200+ ms. */
const slowFromMs = endMs - 10 * MIN;

function provider(attrs: Record<string, string>) {
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes(attrs),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${s.otlpUrl}/v1/traces` }), {
        maxExportBatchSize: 256,
        maxQueueSize: 10_000,
      }),
    ],
  });
  return { p, tracer: p.getTracer('drill-down-test') };
}

/** One call: shop's server span, its client span to pricing, and pricing's server span. */
function call(shop: Tracer, pricing: Tracer, at: number, host: string, i: number): Sent {
  const slow = at >= slowFromMs && host === 'shop-2';
  const flag = slow || (host === 'shop-2' && i % 3 === 0) ? 'new-pricing' : 'old-pricing';
  const calleeMs = slow && flag === 'new-pricing' ? 200 + (i % 7) : 10 + (i % 5);
  const clientMs = calleeMs + 3;
  const serverMs = clientMs + 4 + (i % 3);
  const server = shop.startSpan('GET /cart', {
    kind: SpanKind.SERVER,
    startTime: at,
    attributes: {
      'http.request.method': 'GET',
      'http.route': '/cart',
      'app.flag': flag,
      'app.items': 1 + (i % 4),
    },
  });
  const ctx = trace.setSpan(context.active(), server);
  const client = shop.startSpan(
    'GET',
    {
      kind: SpanKind.CLIENT,
      startTime: at + 1,
      attributes: {
        'http.request.method': 'GET',
        'server.address': 'pricing',
        'peer.service': 'pricing',
        'url.full': 'http://pricing/price',
      },
    },
    ctx,
  );
  const callee = pricing.startSpan(
    'GET /price',
    {
      kind: SpanKind.SERVER,
      startTime: at + 2,
      attributes: { 'http.request.method': 'GET', 'http.route': '/price' },
    },
    trace.setSpan(context.active(), client),
  );
  callee.end(at + 2 + calleeMs);
  client.end(at + 1 + clientMs);
  server.end(at + serverMs);
  return {
    traceId: server.spanContext().traceId,
    serverSpanId: server.spanContext().spanId,
    clientSpanId: client.spanContext().spanId,
    calleeSpanId: callee.spanContext().spanId,
    startMs: at,
    host,
    flag,
    serverMs,
    clientMs,
    calleeMs,
  };
}

async function get<T>(path: string, status = 200): Promise<T> {
  const res = await fetch(`${s.url}${path}`);
  const body = await res.text();
  expect(res.status, body).toBe(status);
  return JSON.parse(body) as T;
}

async function seriesOf(service: string, view: string): Promise<Series> {
  const list = await get<SeriesList>(`/api/v1/series?service=${service}`);
  const found = list.series.filter((x) => x.view === view);
  expect(found, JSON.stringify(list.series)).toHaveLength(1);
  return found[0]!;
}

beforeAll(async () => {
  s = await startTestServer({ env: { ONSET_TRACE_URL_TEMPLATE: TEMPLATE } });
  const shops = ['shop-1', 'shop-2'].map((host) => ({
    host,
    ...provider({
      'service.name': 'shop',
      'host.name': host,
      'os.version': host === 'shop-2' ? '6.8.0-45' : '6.1.0-13',
    }),
  }));
  const pricing = provider({ 'service.name': 'pricing', 'host.name': 'pricing-1' });
  // One call every 15 s per host: 4 a minute per (series, host), all of them exemplars.
  let i = 0;
  for (let at = startMs; at < endMs; at += 15_000)
    for (const shop of shops)
      sent.push(call(shop.tracer, pricing.tracer, at + 500, shop.host, i++));
  for (const p of [...shops.map((x) => x.p), pricing.p]) {
    await p.forceFlush();
    await p.shutdown();
  }
}, 120_000);

afterAll(async () => {
  await s?.close();
});

const iso = (ms: number) => new Date(ms).toISOString();

describe('GET /api/v1/traces/{trace_id}', () => {
  it('answers every stored span of the trace with the sent timing, kind, service, host and attributes', async () => {
    const cart = await seriesOf('shop', 'server');
    const price = await seriesOf('pricing', 'server');
    for (const c of [sent[0]!, sent.find((x) => x.calleeMs >= 200)!]) {
      const t = await get<Trace>(`/api/v1/traces/${c.traceId}`);
      expect(t.trace_id).toBe(c.traceId);
      expect(t.start).toBe(iso(c.startMs));
      expect(t.duration_ms).toBe(Math.max(c.serverMs, 1 + c.clientMs, 2 + c.calleeMs));
      expect(t.services).toEqual(['pricing', 'shop']);
      expect(t.truncated).toBe(false);
      expect(t.trace_url).toBe(
        `http://jaeger.example:16686/trace/${c.traceId}?uiFind=${c.serverSpanId}`,
      );
      expect(
        t.spans.map((x) => [x.span_id, x.parent_span_id, x.kind, x.service, x.host, x.depth]),
      ).toEqual([
        [c.serverSpanId, null, 'server', 'shop', c.host, 0],
        [c.clientSpanId, c.serverSpanId, 'client', 'shop', c.host, 1],
        [c.calleeSpanId, c.clientSpanId, 'server', 'pricing', 'pricing-1', 2],
      ]);
      expect(t.spans.map((x) => x.duration_ms)).toEqual([c.serverMs, c.clientMs, c.calleeMs]);
      expect(t.spans.map((x) => x.offset_ms)).toEqual([0, 1, 2]);
      const [server, client, callee] = t.spans;
      expect(server).toMatchObject({ name: cart.name, series_id: cart.id, op: 'request' });
      expect(callee).toMatchObject({ name: price.name, series_id: price.id });
      const clientSeries = await get<Series>(`/api/v1/series/${client!.series_id}`);
      expect(client!.name).toBe(clientSeries.name);
      expect(server!.attributes).toEqual({
        'http.request.method': 'GET',
        'http.route': '/cart',
        'app.flag': c.flag,
        'app.items': 1 + (sent.indexOf(c) % 4),
      });
      expect(server!.resource_attributes).toMatchObject({
        'os.version': c.host === 'shop-2' ? '6.8.0-45' : '6.1.0-13',
      });
    }
  });

  it('takes upper-case hex; a bad, all-zero or unknown trace id is a 400 or 404 that says why', async () => {
    const c = sent[1]!;
    const upper = await get<Trace>(`/api/v1/traces/${c.traceId.toUpperCase()}`);
    expect(upper.trace_id).toBe(c.traceId);
    expect(upper.spans).toHaveLength(3);
    const bad = await get<{ error: string; message: string }>('/api/v1/traces/not-a-trace', 400);
    expect(bad.message).toMatch(/trace_id/);
    const short = await get<{ message: string }>(`/api/v1/traces/${c.traceId.slice(2)}`, 400);
    expect(short.message).toMatch(/trace_id/);
    const zero = await get<{ message: string }>(`/api/v1/traces/${'0'.repeat(32)}`, 400);
    expect(zero.message).toMatch(/all zeros/);
    const missing = await get<{ error: string; message: string }>(
      `/api/v1/traces/${'ab'.repeat(16)}`,
      404,
    );
    expect(missing.message).toMatch(
      /no span of trace abab.* is stored \(raw spans are kept 48 h\)/,
    );
  });
});

/** The attribute lift the test expects, computed from what was sent. */
function expectedLift(
  selected: Sent[],
  rest: Sent[],
  key: string,
  valueOf: (c: Sent) => string,
  value: string,
) {
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const ns = selected.filter((c) => valueOf(c) === value).length;
  const nr = rest.filter((c) => valueOf(c) === value).length;
  return {
    key,
    value,
    share_selected: r3(ns / selected.length),
    share_rest: r3(nr / rest.length),
    lift: r3(r3(ns / selected.length - nr / rest.length)),
    count_selected: ns,
    count_rest: nr,
  };
}

describe('GET /api/v1/series/{id}/compare', () => {
  it('a latency band: the slow calls against the rest, counts and lifts as sent', async () => {
    const cart = await seriesOf('shop', 'server');
    const c = await get<SelectionCompare>(
      `/api/v1/series/${cart.id}/compare?from=${iso(startMs)}&to=${iso(endMs)}&min_ms=100`,
    );
    const selected = sent.filter((x) => x.serverMs >= 100);
    const rest = sent.filter((x) => x.serverMs < 100);
    expect(selected.length).toBeGreaterThan(30);
    expect(c.calls).toEqual({ selected: selected.length, rest: rest.length });
    // Every stored call too (span durations, not the exemplars): the same here, every span sent.
    expect(c.all_calls).toEqual({
      selected: selected.length,
      rest: rest.length,
      from: iso(startMs),
      to: iso(endMs),
    });
    expect(c.complete).toBe(true);
    expect(c.selection).toEqual({ from: iso(startMs), to: iso(endMs), min_ms: 100, max_ms: null });
    // Every slow call is shop-2's with the new flag: those two values lead.
    const top = c.attributes.slice(0, 4).map((l) => `${l.key}=${l.value}`);
    expect(top).toEqual(
      expect.arrayContaining(['host.name=shop-2', 'app.flag=new-pricing', 'os.version=6.8.0-45']),
    );
    expect(c.attributes.find((l) => l.key === 'host.name')).toEqual(
      expectedLift(selected, rest, 'host.name', (x) => x.host, 'shop-2'),
    );
    expect(c.attributes.find((l) => l.key === 'app.flag')).toEqual(
      expectedLift(selected, rest, 'app.flag', (x) => x.flag, 'new-pricing'),
    );
    // The selection's exemplars are its own calls, with the trace link.
    expect(c.exemplars.length).toBeGreaterThan(0);
    const ids = new Set(selected.map((x) => x.traceId));
    for (const e of c.exemplars) {
      expect(ids.has(e.trace_id)).toBe(true);
      expect(e.duration_ms).toBeGreaterThanOrEqual(100);
      expect(e.trace_url).toContain(e.trace_id);
    }
    const slowest = c.exemplars.find((e) => e.role === 'slowest')!;
    expect(slowest.duration_ms).toBe(Math.max(...selected.map((x) => x.serverMs)));
  });

  it('a time range: the slow period against the rest of the window', async () => {
    const cart = await seriesOf('shop', 'server');
    const c = await get<SelectionCompare>(
      `/api/v1/series/${cart.id}/compare?from=${iso(startMs)}&to=${iso(endMs)}&sel_from=${iso(slowFromMs)}`,
    );
    const selected = sent.filter((x) => x.startMs >= slowFromMs);
    const rest = sent.filter((x) => x.startMs < slowFromMs);
    expect(c.calls).toEqual({ selected: selected.length, rest: rest.length });
    expect(c.all_calls).toMatchObject({ selected: selected.length, rest: rest.length });
    expect(c.selection).toMatchObject({ from: iso(slowFromMs), to: iso(endMs), min_ms: null });
    expect(c.attributes.find((l) => l.key === 'app.flag' && l.value === 'new-pricing')).toEqual(
      expectedLift(selected, rest, 'app.flag', (x) => x.flag, 'new-pricing'),
    );
    // A box (time range and band) on the callee's series, which has spans of its own.
    const price = await seriesOf('pricing', 'server');
    const box = await get<SelectionCompare>(
      `/api/v1/series/${price.id}/compare?from=${iso(startMs)}&to=${iso(endMs)}&sel_from=${iso(slowFromMs)}&min_ms=0&max_ms=100`,
    );
    const inBox = sent.filter((x) => x.startMs >= slowFromMs && x.calleeMs < 100);
    expect(box.calls).toEqual({ selected: inBox.length, rest: sent.length - inBox.length });
    expect(box.all_calls).toMatchObject({
      selected: inBox.length,
      rest: sent.length - inBox.length,
    });
    // The caller's client series to pricing: its calls are read as paired edge calls.
    const client = await seriesOf('shop', 'client');
    expect(client.peer).toBe('pricing');
    const edge = await get<SelectionCompare>(
      `/api/v1/series/${client.id}/compare?from=${iso(startMs)}&to=${iso(endMs)}&min_ms=100`,
    );
    const slowClient = sent.filter((x) => x.clientMs >= 100);
    expect(edge.calls).toEqual({
      selected: slowClient.length,
      rest: sent.length - slowClient.length,
    });
    expect(edge.attributes.find((l) => l.key === 'host.name' && l.value === 'shop-2')).toEqual(
      expectedLift(
        slowClient,
        sent.filter((x) => x.clientMs < 100),
        'host.name',
        (x) => x.host,
        'shop-2',
      ),
    );
    expect(edge.exemplars.every((e) => e.paired?.service === 'pricing')).toBe(true);
    // An edge's view is read paired: its durations are not the series' own, so none are counted.
    expect(edge.all_calls).toBeNull();
  });

  it('a busy series: attributes from a sample of exemplars, every stored call counted on each side', async () => {
    // 4,000 spans in one export, 60 ms apart from 5 minutes into the window, 1-200 ms each.
    const at = (i: number) => startMs + 5 * MIN + i * 60;
    const ms = (i: number) => 1 + (i % 200);
    const spans = Array.from({ length: 4000 }, (_, i) => {
      const t0 = BigInt(at(i)) * 1_000_000n;
      return {
        traceId: 'b'.repeat(8) + (i + 1).toString(16).padStart(24, '0'),
        spanId: (i + 1).toString(16).padStart(16, '0'),
        name: 'GET /busy',
        kind: 2,
        startTimeUnixNano: String(t0),
        endTimeUnixNano: String(t0 + BigInt(ms(i)) * 1_000_000n),
      };
    });
    const res = await fetch(`${s.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: {
              attributes: [
                { key: 'service.name', value: { stringValue: 'busy' } },
                { key: 'host.name', value: { stringValue: 'busy-1' } },
              ],
            },
            scopeSpans: [{ spans }],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const busy = await seriesOf('busy', 'server');
    const selFrom = startMs + 7 * MIN;
    const c = await get<SelectionCompare>(
      `/api/v1/series/${busy.id}/compare?from=${iso(startMs)}&to=${iso(endMs)}&sel_from=${iso(selFrom)}&min_ms=150`,
    );
    const selected = spans.filter((_, i) => at(i) >= selFrom && ms(i) >= 150).length;
    expect(selected).toBeGreaterThan(100);
    expect(c.all_calls).toEqual({
      selected,
      rest: 4000 - selected,
      from: iso(selFrom),
      to: iso(endMs),
    });
    // The exemplars are a sample: fewer on both sides than were stored.
    expect(c.calls.selected + c.calls.rest).toBeLessThan(4000);
    expect(c.calls.selected).toBeLessThanOrEqual(selected);
  });

  it('refuses a window too wide, a selection outside it or none at all, an unknown series', async () => {
    const cart = await seriesOf('shop', 'server');
    const base = `/api/v1/series/${cart.id}/compare`;
    const wide = await get<{ message: string }>(`${base}?from=now-25h&to=now&min_ms=10`, 400);
    expect(wide.message).toMatch(/too wide: at most 24 h/);
    const outside = await get<{ message: string }>(
      `${base}?from=now-1h&to=now&sel_from=now-2h&sel_to=now-30m`,
      400,
    );
    expect(outside.message).toMatch(/inside the window/);
    const whole = await get<{ message: string }>(`${base}?from=now-1h&to=now`, 400);
    expect(whole.message).toMatch(/whole window/);
    const band = await get<{ message: string }>(`${base}?min_ms=50&max_ms=10`, 400);
    expect(band.message).toMatch(/min_ms/);
    const negative = await get<{ message: string }>(`${base}?min_ms=-5`, 400);
    expect(negative.message).toMatch(/min_ms/);
    const time = await get<{ message: string }>(`${base}?sel_from=yesterday`, 400);
    expect(time.message).toMatch(/sel_from/);
    await get('/api/v1/series/999999999/compare?min_ms=10', 404);
  });
});
