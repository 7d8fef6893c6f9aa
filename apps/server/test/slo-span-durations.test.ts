/**
 * SLO counts from `span_durations`, checked against counts computed here from
 * the spans a real OpenTelemetry SDK exported: durations exactly at the
 * threshold and one nanosecond either side, a threshold at a histogram bucket
 * boundary, spans a fraction of a microsecond before a minute's end, spans on
 * both sides of midnight, and OTLP retries (whole and partial) counted once.
 * Both ways a counter is filled must agree with that count: the every-minute
 * counting pass (SLO made before the spans) and a new SLO's backfill (made
 * after them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind, type HrTime } from '@opentelemetry/api';
import { GAMMA } from '@onset/core';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runSloPass } from '../src/slos/evaluate.ts';
import { api } from './slo-support.ts';

const SERVICE = 'slo-durations';
const MIN_NS = 60_000_000_000n;
const DAY_MS = 86_400_000;

let srv: TestServer;
let A: ReturnType<typeof api>;
beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
});
afterAll(() => srv?.close());

/** Thresholds: exactly on many spans' durations, and on a bucket boundary (to the ns). */
const THRESHOLD_NS = 250_000_000n;
const BUCKET = Math.ceil(Math.log(100_000) / Math.log(GAMMA));
const BOUNDARY_NS = BigInt(Math.round(GAMMA ** BUCKET * 1000));
const THRESHOLDS = { at: THRESHOLD_NS, bucket: BOUNDARY_NS };

/** Durations around both thresholds (±1 ns), plus zero, fast and slow ones. */
const DURATIONS_NS = [
  THRESHOLD_NS,
  THRESHOLD_NS + 1n,
  THRESHOLD_NS - 1n,
  BOUNDARY_NS,
  BOUNDARY_NS + 1n,
  BOUNDARY_NS - 1n,
  0n,
  1_234_567n,
  900_000_000n,
  99_999_999n,
];

interface SentSpan {
  startNs: bigint;
  endNs: bigint;
}

const toHr = (ns: bigint): HrTime => [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
const hrNs = (t: HrTime) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);

/** Spans made by the SDK (two hosts, two operations), kept in memory to be exported (again) at will. */
function makeSpans(specs: Array<{ startNs: bigint; durNs: bigint; host: number; op: number }>) {
  const out: ReadableSpan[] = [];
  for (const host of [0, 1]) {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': SERVICE, 'host.name': `node-${host}` }),
      spanProcessors: [new SimpleSpanProcessor(memory)],
    });
    const tracer = provider.getTracer('onset-test');
    for (const s of specs.filter((x) => x.host === host)) {
      const span = tracer.startSpan(s.op ? 'GET /lookup' : 'GET /health', {
        kind: SpanKind.SERVER,
        startTime: toHr(s.startNs),
        attributes: { 'http.request.method': 'GET', 'http.route': s.op ? '/lookup' : '/health' },
      });
      span.end(toHr(s.startNs + s.durNs));
    }
    out.push(...memory.getFinishedSpans());
  }
  return out;
}

/** One OTLP export of these spans by the SDK's protobuf exporter (a retry is the same call again). */
async function exportOnce(spans: ReadableSpan[]): Promise<void> {
  const exporter = new OTLPTraceExporter({ url: `${srv.otlpUrl}/v1/traces` });
  const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
    exporter.export(spans, resolve),
  );
  await exporter.shutdown();
  expect(result.code, String(result.error)).toBe(0); // ExportResultCode.SUCCESS
}

/**
 * What the counters must say, computed from the spans sent: each distinct
 * span once, in the UTC minute of its start as stored (to the microsecond),
 * good when its duration is at or under the threshold.
 */
function expected(spans: ReadableSpan[], thresholdNs: bigint): Map<string, [number, number]> {
  const unique = new Map<string, SentSpan>();
  for (const s of spans)
    unique.set(`${s.spanContext().traceId}/${s.spanContext().spanId}`, {
      startNs: hrNs(s.startTime),
      endNs: hrNs(s.endTime),
    });
  const out = new Map<string, [number, number]>();
  for (const s of unique.values()) {
    const us = (s.startNs + 500n) / 1000n; // rounded to the µs, as stored
    const minute = (us * 1000n) / MIN_NS;
    const key = new Date(Number(minute * 60_000n)).toISOString();
    const c = out.get(key) ?? [0, 0];
    if (s.endNs - s.startNs <= thresholdNs) c[0]++;
    c[1]++;
    out.set(key, c);
  }
  return out;
}

async function countersOf(id: string): Promise<Map<string, [number, number]>> {
  const { rows } = await srv.onset.pool.query<{ minute: Date; good: string; total: string }>(
    `SELECT minute, good, total FROM slo_minutes WHERE slo_id = $1 ORDER BY minute`,
    [id],
  );
  return new Map(rows.map((r) => [r.minute.toISOString(), [Number(r.good), Number(r.total)]]));
}

async function daysOf(id: string): Promise<Record<string, number[]>> {
  const { rows } = await srv.onset.pool.query<{ day: Date; good: string; total: string }>(
    `SELECT day, good, total FROM slo_days WHERE slo_id = $1 ORDER BY day`,
    [id],
  );
  return Object.fromEntries(
    rows.map((r) => [r.day.toISOString(), [Number(r.good), Number(r.total)]]),
  );
}

function perDay(m: Map<string, [number, number]>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [minute, [g, t]] of [...m].sort()) {
    const day = new Date(Math.floor(Date.parse(minute) / DAY_MS) * DAY_MS).toISOString();
    const c = (out[day] ??= [0, 0]);
    c[0]! += g;
    c[1]! += t;
  }
  return out;
}

async function createSlo(name: string, thresholdNs: bigint): Promise<string> {
  const r = await A.post('/api/v1/slos', {
    name,
    service: SERVICE,
    threshold_ms: Number(thresholdNs) / 1e6,
    objective: 0.99,
    window: '7d',
  });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

const settle = () => new Promise((r) => setTimeout(r, 300));
const pass = () => runSloPass(srv.onset.pool, { settleMs: 0 });

describe('SLO counts from span_durations equal counts computed from the spans sent', () => {
  const now = BigInt(Date.now()) * 1_000_000n;
  const midnight = (now / (BigInt(DAY_MS) * 1_000_000n)) * BigInt(DAY_MS) * 1_000_000n;
  // A minute boundary well inside today's recent past.
  const boundary = ((now - 20n * MIN_NS) / MIN_NS) * MIN_NS;
  let seq = 0;
  const around = (at: bigint) =>
    // Exactly on it, 1 µs and 0.4 µs before (stored at the boundary itself), 0.6 µs and 1 µs after.
    [at, at - 1000n, at - 400n, at + 600n, at + 1000n, at - 30n * 1_000_000_000n].flatMap(
      (startNs) =>
        DURATIONS_NS.map((durNs) => ({ startNs, durNs, host: seq % 2, op: seq++ % 3 ? 1 : 0 })),
    );
  // Spans around midnight (one export), and around a recent minute boundary (another: that one
  // starts late enough to be written straight into today's partition with the server's folds).
  const nearMidnight = makeSpans(around(midnight));
  const recent = makeSpans(around(boundary));
  const later = makeSpans(around(boundary + 2n * MIN_NS));
  const all = [...nearMidnight, ...recent, ...later];
  const ids: Record<string, string> = {};

  it('the counting pass: SLOs made first count each span once, at its stored minute', async () => {
    for (const [k, ns] of Object.entries(THRESHOLDS)) ids[k] = await createSlo(`pass ${k}`, ns);
    await exportOnce(nearMidnight);
    await exportOnce(nearMidnight); // a whole retry
    await exportOnce(recent.slice(0, 40));
    await settle();
    await pass();
    await exportOnce(recent); // a partial retry: 40 already stored, counted by the pass before
    await exportOnce(later);
    await exportOnce([...recent.slice(10, 30), ...later.slice(5, 25)]); // only retries
    await settle();
    await pass();
    await pass();
    for (const [k, ns] of Object.entries(THRESHOLDS)) {
      const want = expected(all, ns);
      expect([...want.values()].reduce((n, [, t]) => n + t, 0)).toBe(all.length);
      expect(await countersOf(ids[k]!)).toEqual(want);
      expect(await daysOf(ids[k]!)).toEqual(perDay(want));
    }
    // The minutes the test means to cover: both sides of midnight and of the recent boundary.
    const at = expected(all, THRESHOLD_NS);
    for (const ns of [midnight - MIN_NS, midnight, boundary - MIN_NS, boundary])
      expect(at.has(new Date(Number(ns / 1_000_000n)).toISOString())).toBe(true);
    // 0.4 µs before midnight is stored at midnight: today's counter, not yesterday's.
    expect(Object.keys(perDay(at))).toHaveLength(2);
  });

  it("a new SLO's history (backfill) is the same count", async () => {
    for (const [k, ns] of Object.entries(THRESHOLDS)) {
      const id = await createSlo(`backfill ${k}`, ns);
      const want = expected(all, ns);
      expect(await countersOf(id)).toEqual(want);
      const status = (await A.get(`/api/v1/slos/${id}`)).body.status;
      const [good, total] = [...want.values()].reduce(([g, t], [a, b]) => [g + a, t + b], [0, 0]);
      expect(status).toMatchObject({ good, total });
      expect((await A.get(`/api/v1/slos/${id}`)).body.exact_since).toBeNull();
      // The pass counts nothing more for it.
      await pass();
      expect(await countersOf(id)).toEqual(want);
    }
  });

  it('stores every durations array sorted, and marks it so', async () => {
    const { rows } = await srv.onset.pool.query<{ arrays: number; sorted: number }>(
      `SELECT count(*)::int AS arrays,
              count(*) FILTER (WHERE sd.sorted AND sd.durations = ARRAY(SELECT unnest(sd.durations) ORDER BY 1))::int AS sorted
         FROM span_durations sd JOIN series s ON s.id = sd.series_id WHERE s.service = $1`,
      [SERVICE],
    );
    expect(rows[0]!.arrays).toBeGreaterThan(0);
    expect(rows[0]!.sorted).toBe(rows[0]!.arrays);
  });

  it('the pass reads durations, not raw span rows: spans whose raw rows are gone still count', async () => {
    const more = makeSpans(around(boundary + 4n * MIN_NS));
    await exportOnce(more);
    await srv.onset.pool.query(
      `DELETE FROM observations o USING series s WHERE o.series_id = s.id AND s.service = $1
          AND o.start_time >= $2`,
      [SERVICE, new Date(Number((boundary + 3n * MIN_NS) / 1_000_000n))],
    );
    await settle();
    await pass();
    for (const [k, ns] of Object.entries(THRESHOLDS))
      expect(await countersOf(ids[k]!)).toEqual(expected([...all, ...more], ns));
  });

  it('counts an unsorted array stored before migration 0024 element by element', async () => {
    // Durations in µs around both thresholds, out of order, as array_agg wrote them then.
    const us = [900_000, 250_000, 0, 250_000.001, Number(BOUNDARY_NS) / 1000, 249_999.999, 1];
    const minute = new Date(Number((boundary + 6n * MIN_NS) / 1_000_000n));
    await srv.onset.pool.query(
      `INSERT INTO span_durations (received_day, series_id, minute, durations)
       SELECT current_date, s.id, $2, $3::float8[] FROM series s WHERE s.service = $1 ORDER BY s.id LIMIT 1`,
      [SERVICE, minute, us],
    );
    await settle();
    await pass();
    for (const [k, ns] of Object.entries(THRESHOLDS)) {
      const good = us.filter((d) => d * 1000 <= Number(ns)).length;
      expect((await countersOf(ids[k]!)).get(minute.toISOString())).toEqual([good, us.length]);
    }
  });
});
