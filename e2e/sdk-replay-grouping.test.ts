/**
 * One incident, one regression whatever the order (issue 34): the span shapes the official
 * zero-code instrumentations really sent (e2e/fixtures/sdk: web = Python Flask + requests, api =
 * Go otelhttp, store = the Java agent), replayed as 150 minutes of traffic, 12 checkouts a
 * minute. Each replayed checkout is a recorded one (its spans, names, kinds and attributes as
 * recorded; new trace and span ids; moved in time): its `/items` call (api -> store) from a
 * recorded checkout before or after the store's ×3, its `/quote` call from one before or after the
 * api's +25 ms, so the two recorded changes land 25 minutes apart, as in the polyglot run (the
 * first three recorded checkouts, the JVM's and Go's warm-up at 100-200 ms, are left out).
 * Markers are posted as the changes happen (a CI hook, a minute later) and detection runs every 3
 * minutes, as a server would. Fed as recorded (callers' series created first) and reversed
 * (callees' first: series ids in the opposite order), each injected step is ONE regression, with
 * the callee's marker as its top suspect; a regression merged into another is closed as merged
 * and its alert is not left firing; the survivors' alerts name their headline's series.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Alert, Regression, Series } from '@onset/contract';
import { TraceRequest } from '@onset/server/internals';
import { loadBodies, loadManifest, SDKS, type Sdk } from './fixtures/sdk/index.ts';

const MIN = 60_000;
const MINUTES = 150;
/** Test minutes (from the start) at which the api's +25 ms and the store's ×3 land. */
const API_STEP = 100;
const STORE_STEP = 125;
const PER_MINUTE = 12;
/** Recorded checkouts at the start of the recording that are warm-up (JIT), not steady state. */
const WARMUP = 3;

type Any = Record<string, any>;
interface RecSpan {
  sdk: Sdk;
  span: Any;
  startMs: number;
}

const codec = TraceRequest as unknown as {
  toObject(m: unknown, o: Record<string, unknown>): Any;
  fromObject(o: unknown): unknown;
  encode(m: unknown): { finish(): Uint8Array };
  decode(b: Uint8Array): unknown;
};
const b64 = (b: Buffer) => b.toString('base64');

/** Every recorded span by trace, and each SDK's resource and scope as recorded. */
function recording() {
  const traces = new Map<string, RecSpan[]>();
  const envelope = new Map<Sdk, { resource: Any; scope: Any; schemaUrl?: string }>();
  for (const sdk of SDKS)
    for (const b of loadBodies(sdk).filter((x) => x.signal === 'traces')) {
      const req = codec.toObject(codec.decode(b.body), { longs: String, bytes: String });
      for (const rs of req.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) {
          if (!envelope.has(sdk))
            envelope.set(sdk, { resource: rs.resource, scope: ss.scope, schemaUrl: ss.schemaUrl });
          for (const span of ss.spans ?? []) {
            const list = traces.get(span.traceId) ?? [];
            list.push({ sdk, span, startMs: Number(BigInt(span.startTimeUnixNano) / 1_000_000n) });
            traces.set(span.traceId, list);
          }
        }
    }
  return { traces: [...traces.values()], envelope };
}

/** One recorded checkout: its root, and the spans under each of the web's two calls. */
interface Checkout {
  root: RecSpan;
  /** The web's call to api /items/{id} and everything under it (api -> store). */
  items: RecSpan[];
  /** The web's call to api /quote/{id} and the api's server span. */
  quote: RecSpan[];
}

function checkouts(traces: RecSpan[][]): { before: Checkout[]; after: Checkout[] } {
  const stepAt = loadManifest('python-requests').stepAtMs;
  const all: Checkout[] = [];
  for (const spans of traces) {
    const root = spans.find((s) => !s.span.parentSpanId)!;
    const under = (id: string): RecSpan[] => {
      const kids = spans.filter((s) => s.span.parentSpanId === id);
      return kids.flatMap((k) => [k, ...under(k.span.spanId)]);
    };
    const calls = spans.filter((s) => s.span.parentSpanId === root.span.spanId);
    const tree = calls.map((c) => [c, ...under(c.span.spanId)]);
    const named = (route: string) => tree.find((t) => t.some((s) => s.span.name.includes(route)))!;
    all.push({ root, items: named('/items/'), quote: named('/quote/') });
  }
  all.sort((a, b) => a.root.startMs - b.root.startMs);
  const before = all.filter((c) => c.root.startMs < stepAt).slice(WARMUP);
  const after = all.filter((c) => c.root.startMs >= stepAt);
  expect(before.length).toBeGreaterThanOrEqual(8);
  expect(after.length).toBeGreaterThanOrEqual(8);
  return { before, after };
}

/**
 * The replayed checkouts, one OTLP body per SDK per minute (as each exporter batches), in the
 * order the SDKs' bodies arrive: web, api, store.
 */
function replay(startMs: number): Array<{ sdk: Sdk; minute: number; body: Buffer }> {
  const { traces, envelope } = recording();
  const { before, after } = checkouts(traces);
  let pick = 0;
  const bodies: Array<{ sdk: Sdk; minute: number; body: Buffer }> = [];
  for (let m = 0; m < MINUTES; m++) {
    const perSdk = new Map<Sdk, Any[]>(SDKS.map((s) => [s, []]));
    for (let i = 0; i < PER_MINUTE; i++) {
      const t0 = startMs + m * MIN + Math.round(((i + 0.5) * MIN) / PER_MINUTE);
      const itemsFrom = m >= STORE_STEP ? after : before;
      const quoteFrom = m >= API_STEP ? after : before;
      const items = itemsFrom[pick % itemsFrom.length]!;
      const quote = quoteFrom[(pick * 7 + 3) % quoteFrom.length]!;
      pick++;
      const traceId = b64(randomBytes(16));
      const ids = new Map<string, string>();
      const idOf = (old: string) => {
        let v = ids.get(old);
        if (!v) ids.set(old, (v = b64(randomBytes(8))));
        return v;
      };
      const rootId = idOf(items.root.span.spanId);
      const place = (s: RecSpan, from: Checkout, parent?: string) => {
        const shiftNs = BigInt(t0 - from.root.startMs) * 1_000_000n;
        const span: Any = {
          ...s.span,
          traceId,
          spanId: idOf(s.span.spanId),
          parentSpanId: parent ?? idOf(s.span.parentSpanId),
          startTimeUnixNano: String(BigInt(s.span.startTimeUnixNano) + shiftNs),
          endTimeUnixNano: String(BigInt(s.span.endTimeUnixNano) + shiftNs),
        };
        perSdk.get(s.sdk)!.push(span);
        return span;
      };
      // The /quote call of another recorded checkout, under this one's root.
      const quoteIds = new Map<string, string>();
      for (const s of quote.quote) {
        const own = s.span.parentSpanId === quote.root.span.spanId;
        if (!quoteIds.has(s.span.spanId)) quoteIds.set(s.span.spanId, b64(randomBytes(8)));
        const shiftNs = BigInt(t0 - quote.root.startMs) * 1_000_000n;
        perSdk.get(s.sdk)!.push({
          ...s.span,
          traceId,
          spanId: quoteIds.get(s.span.spanId),
          parentSpanId: own ? rootId : quoteIds.get(s.span.parentSpanId),
          startTimeUnixNano: String(BigInt(s.span.startTimeUnixNano) + shiftNs),
          endTimeUnixNano: String(BigInt(s.span.endTimeUnixNano) + shiftNs),
        });
      }
      for (const s of items.items) place(s, items);
      // The root lasts until its later call is back.
      const root = place(items.root, items, '');
      const ends = perSdk
        .get('python-requests')!
        .filter((x) => x.traceId === traceId)
        .map((x) => BigInt(x.endTimeUnixNano));
      root.endTimeUnixNano = String(ends.reduce((a, b) => (b > a ? b : a)) + 200_000n);
    }
    for (const sdk of SDKS) {
      const env = envelope.get(sdk)!;
      const msg = codec.fromObject({
        resourceSpans: [
          {
            resource: env.resource,
            scopeSpans: [{ scope: env.scope, schemaUrl: env.schemaUrl, spans: perSdk.get(sdk) }],
          },
        ],
      });
      bodies.push({ sdk, minute: m, body: Buffer.from(codec.encode(msg).finish()) });
    }
  }
  return bodies;
}

const ORDERS = {
  'as recorded (callers first)': (b: ReturnType<typeof replay>) => b,
  'reversed (callees first, bodies backwards)': (b: ReturnType<typeof replay>) => [...b].reverse(),
};

for (const [order, arrange] of Object.entries(ORDERS)) {
  describe(`recorded SDK shapes, two changes 25 minutes apart, fed ${order}`, () => {
    let server: TestServer;
    let all: Regression[] = [];
    let series: Series[] = [];
    let alerts: Alert[] = [];
    const markers: Record<'api' | 'store', string> = { api: '', store: '' };
    const start = Math.floor(Date.now() / MIN) * MIN - (MINUTES + 5) * MIN;
    const at = (m: number) => start + m * MIN;

    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBeLessThan(300);
      return JSON.parse(text) as Any;
    };
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      return (await res.json()) as T;
    };

    beforeAll(async () => {
      server = await startTestServer();
      for (const b of arrange(replay(start))) {
        const res = await fetch(`${server.otlpUrl}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body: new Uint8Array(b.body),
        });
        expect(res.status).toBe(200);
      }
      // Passes through the history, then every 3 minutes, each marker posted a minute after its change.
      const change = {
        api: { at: API_STEP, from_version: '1.4.0', to_version: '1.5.0', kind: 'code' },
        store: { at: STORE_STEP, from_version: '2.0.1', to_version: '2.1.0', kind: 'dependency' },
      } as const;
      for (let m = API_STEP - 10; m <= MINUTES; m += 3) {
        for (const service of ['api', 'store'] as const) {
          const { at: when, ...rest } = change[service];
          if (!markers[service] && m >= when + 2)
            markers[service] = (
              await post('/api/v1/deploys', { service, ...rest, at: new Date(at(when + 1)) })
            ).id;
        }
        await post('/api/v1/detect', { upto: new Date(at(m)).toISOString() });
      }
      all = (await get<{ regressions: Regression[] }>('/api/v1/regressions?status=all&merged=true'))
        .regressions;
      series = [
        ...(await get<{ series: Series[] }>('/api/v1/series?service=web')).series,
        ...(await get<{ series: Series[] }>('/api/v1/series?service=api')).series,
        ...(await get<{ series: Series[] }>('/api/v1/series?service=store')).series,
      ];
      alerts = (await get<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
    }, 600_000);

    afterAll(async () => {
      await server?.close();
    });

    const label = (r: Regression) =>
      `#${r.id} ${r.service} ${r.view} ${r.name}${r.peer ? ` -> ${r.peer}` : ''} [${r.members
        .map((m) => `${m.service} ${m.view} ${m.name}${m.peer ? `->${m.peer}` : ''}`)
        .join(
          '; ',
        )}] top: ${r.suspects[0]?.service ?? 'none'}${r.merged_into ? ` merged into ${r.merged_into}` : ''}`;
    const live = () => all.filter((r) => !r.merged_into);
    const withRoute = (route: string) =>
      live().filter((r) => r.members.some((m) => m.name.includes(route)));

    it('creates the series in the order it claims', () => {
      const id = (service: string) =>
        Math.min(...series.filter((s) => s.service === service).map((s) => Number(s.id)));
      const callersFirst = id('web') < id('store');
      expect(callersFirst, series.map((s) => `${s.id} ${s.service}`).join(', ')).toBe(
        order.startsWith('as recorded'),
      );
    });

    it('opens one regression per injected step, each with the callee’s marker first', () => {
      const shown = all.map(label).join('\n');
      // Every regression left (not merged) is one of the two changes.
      expect(live().length, shown).toBe(2);
      const quote = withRoute('/quote/');
      const stock = withRoute('/stock/');
      expect(quote.length, shown).toBe(1);
      expect(stock.length, shown).toBe(1);
      expect(quote[0]!.id).not.toBe(stock[0]!.id);
      // The api's +25 ms is the web -> api /quote edge's incident: its callee is the api.
      expect(quote[0]!.suspects[0]?.deploy_id, shown).toBe(markers.api);
      // The store's ×3: every view of api -> store, and the callee's own route, in one.
      expect(stock[0]!.suspects[0]?.deploy_id, shown).toBe(markers.store);
      expect(
        stock[0]!.members.some((m) => m.service === 'store' && m.name === 'GET /stock/'),
        shown,
      ).toBe(true);
    });

    it('closes any regression merged into another as merged, its alert not left firing', () => {
      const ids = new Set(all.map((r) => r.id));
      for (const r of all.filter((x) => x.merged_into)) {
        expect(ids.has(r.merged_into!)).toBe(true);
        expect(r.status).toBe('resolved');
        expect(r.resolved_by).toBe('onset');
        expect(r.members).toEqual([]);
        expect(
          alerts.filter((a) => a.regression_id === r.id && a.status === 'firing'),
          label(r),
        ).toEqual([]);
      }
    });

    it('each live regression’s alert is about its headline series, and names its top suspect', () => {
      for (const r of live()) {
        const firing = alerts.filter((a) => a.regression_id === r.id && a.status === 'firing');
        expect(firing.length, label(r)).toBeLessThanOrEqual(1);
        for (const a of firing) {
          expect(a.service, label(r)).toBe(r.service);
          expect(a.series_name, label(r)).toBe(r.name);
          expect((a.details as Any).suspect?.deploy_id ?? null, label(r)).toBe(
            r.suspects[0]?.deploy_id ?? null,
          );
        }
      }
    });
  });
}
