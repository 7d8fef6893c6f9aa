/**
 * The live suite's test-time relay, for real: spans from the official OTLP
 * exporter go through it to a real server and land in the test minute their
 * real start maps to, with their real durations, and the spans of one trace
 * move together (so a caller's and a callee's halves still pair).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  liveMinuteMs,
  MINUTE_MS,
  startTestTimeRelay,
  TestClock,
  type TestTimeRelay,
} from './helpers/test-time.ts';

let server: TestServer;
let relay: TestTimeRelay;
const clock = new TestClock({ realMsPerMinute: 2_000, maxMinutes: 30 });

beforeAll(async () => {
  server = await startTestServer();
  relay = await startTestTimeRelay(clock, server.otlpUrl);
});
afterAll(async () => {
  await relay?.close();
  await server?.close();
});

async function seriesOf(service: string, view: string) {
  const res = await fetch(`${server.url}/api/v1/series?service=${service}&view=${view}`);
  return ((await res.json()) as { series: { id: string; name: string }[] }).series;
}

describe('test time', () => {
  it('runs 60 / (seconds per minute) times faster than the wall clock, in the past', () => {
    expect(clock.speed).toBe(30);
    expect(clock.testStart % MINUTE_MS).toBe(0);
    expect(clock.toTest(clock.realStart + 2_000) - clock.toTest(clock.realStart)).toBe(MINUTE_MS);
    // The end of the longest run is still before the real now.
    expect(clock.toTest(clock.realStart + 30 * 2_000)).toBeLessThan(clock.realStart);
    expect(liveMinuteMs({})).toBe(2_000);
    expect(liveMinuteMs({ ONSET_LIVE_MINUTE_MS: '3000' })).toBe(3_000);
    expect(() => liveMinuteMs({ ONSET_LIVE_MINUTE_MS: '10' })).toThrow(/500 to 60000/);
  });

  it('moves exported spans to test time, keeps durations, and moves a trace’s spans together', async () => {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'tt-caller' }),
      spanProcessors: [
        new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${relay.url}/v1/traces` })),
      ],
    });
    const callee = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'tt-callee' }),
      spanProcessors: [
        new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${relay.url}/v1/traces` })),
      ],
    });
    // A call 7 real seconds in (test minute 3, 30 s into it) lasting 50 ms, its server half 10 ms.
    const real = clock.realStart + 7_000;
    const client = provider.getTracer('t').startSpan('GET /tt', {
      kind: SpanKind.CLIENT,
      startTime: real,
      attributes: { 'http.request.method': 'GET', 'url.template': '/tt', 'server.address': 'tt' },
    });
    const srv = callee.getTracer('t').startSpan(
      'GET /tt',
      {
        kind: SpanKind.SERVER,
        startTime: real + 1_990, // in the next test minute if moved on its own; it moves with its trace
        attributes: { 'http.request.method': 'GET', 'http.route': '/tt' },
      },
      trace.setSpan(context.active(), client),
    );
    // The caller's half reaches the relay first: its shift is the trace's.
    client.end(real + 2_050);
    await provider.forceFlush();
    srv.end(real + 2_000);
    await callee.forceFlush();
    expect(relay.spans).toBe(2);

    const minute = Math.floor(clock.toTest(real) / MINUTE_MS) * MINUTE_MS;
    expect(minute - clock.testStart).toBe(3 * MINUTE_MS);
    for (const [service, view, ms] of [
      ['tt-caller', 'client', 2_050],
      ['tt-callee', 'server', 10],
    ] as const) {
      const [s] = await seriesOf(service, view);
      expect(s, `${service} ${view}`).toBeDefined();
      const q = await fetch(
        `${server.url}/api/v1/series/${s!.id}/quantiles?from=${minute - 10 * MINUTE_MS}&to=${minute + 10 * MINUTE_MS}&step=1m&q=0.5`,
      );
      const { points } = (await q.json()) as {
        points: { t: string; count: number; q: Record<string, number> }[];
      };
      const withData = points.filter((p) => p.count > 0);
      expect(withData.map((p) => Date.parse(p.t))).toEqual([minute]);
      expect(withData[0]!.q['0.5']).toBeGreaterThan(ms * 0.97);
      expect(withData[0]!.q['0.5']).toBeLessThan(ms * 1.03);
    }
    await provider.shutdown();
    await callee.shutdown();
  });
});
