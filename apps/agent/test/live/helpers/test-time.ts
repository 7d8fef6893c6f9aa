/**
 * The live suite's test-only time setting: a few real seconds stand for one
 * minute of data, so an hour of per-minute history takes a couple of minutes
 * to record. Nothing in the agent or the server changes: the agent and the
 * instrumented services measure in real time and export as usual, and a
 * loopback relay between them and the server moves each span's start (and its
 * events) to test time before the server sees it. Durations are untouched.
 *
 * Test time runs `60 / secondsPerMinute` times faster than the wall clock and
 * lies in the past (the server refuses detection horizons in the future), so
 * `toTest(now)` stays before the real now for the length of a run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export const MINUTE_MS = 60_000;

export interface TestClockOptions {
  /** Real milliseconds per test minute (the suite's default: ONSET_LIVE_MINUTE_MS or 2000). */
  realMsPerMinute?: number;
  /** Longest run this clock must serve, in test minutes (sets how far in the past test time starts). */
  maxMinutes?: number;
}

/** ONSET_LIVE_MINUTE_MS (test-only): real milliseconds that stand for one minute. */
export function liveMinuteMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.ONSET_LIVE_MINUTE_MS;
  if (v === undefined || v === '') return 2_000;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 500 || n > MINUTE_MS)
    throw new Error(`ONSET_LIVE_MINUTE_MS must be an integer from 500 to 60000, got "${v}"`);
  return n;
}

export class TestClock {
  readonly realMsPerMinute: number;
  /** Test time advances this much per real millisecond. */
  readonly speed: number;
  /** Real epoch ms where test time starts, and the test time (a whole minute) it maps to. */
  readonly realStart: number;
  readonly testStart: number;

  constructor(opts: TestClockOptions = {}, realNow = Date.now()) {
    this.realMsPerMinute = opts.realMsPerMinute ?? liveMinuteMs();
    this.speed = MINUTE_MS / this.realMsPerMinute;
    const maxMinutes = opts.maxMinutes ?? 240;
    this.realStart = realNow;
    // Far enough back that test time at the end of the longest run is still an hour in the past.
    this.testStart = Math.floor((realNow - (maxMinutes + 60) * MINUTE_MS) / MINUTE_MS) * MINUTE_MS;
  }

  /** Test time (epoch ms) of a real instant. */
  toTest(realMs: number): number {
    return this.testStart + (realMs - this.realStart) * this.speed;
  }

  /** Test time now. */
  now(): number {
    return this.toTest(Date.now());
  }

  /** Test minutes (fractional) between two test times. */
  minutesBetween(fromTest: number, toTest: number): number {
    return (toTest - fromTest) / MINUTE_MS;
  }

  /** Resolve when test time reaches `testMs`. */
  async until(testMs: number): Promise<void> {
    const realMs = this.realStart + (testMs - this.testStart) / this.speed;
    const wait = realMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

// ---- OTLP relay ----------------------------------------------------------

/** Protobuf walking: the few wire types an ExportTraceServiceRequest uses. */
function readVarint(buf: Buffer, pos: number): [value: number, next: number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
}

/** Calls `onField(field, wireType, start, end)` for each field of the message in buf[from, to). */
function eachField(
  buf: Buffer,
  from: number,
  to: number,
  onField: (field: number, wire: number, start: number, end: number) => void,
): void {
  let pos = from;
  while (pos < to) {
    const [key, p] = readVarint(buf, pos);
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let start = p;
    let end: number;
    if (wire === 0) end = readVarint(buf, p)[1];
    else if (wire === 1) end = p + 8;
    else if (wire === 5) end = p + 4;
    else if (wire === 2) {
      const [len, q] = readVarint(buf, p);
      start = q;
      end = q + len;
    } else throw new Error(`unsupported wire type ${wire}`);
    if (end > to) throw new Error('truncated field');
    onField(field, wire, start, end);
    pos = end;
  }
}

/**
 * Rewrites span times in place (they are fixed64, so lengths never change):
 * ExportTraceServiceRequest.resource_spans(1) > ScopeSpans(2) > Span(2):
 * start(7), end(8), events(11) > time(1). `shiftFor(traceIdHex, startNs)`
 * says how far to move a span.
 */
export function shiftSpanTimes(
  buf: Buffer,
  shiftFor: (traceId: string, startNs: bigint) => bigint,
): number {
  let spans = 0;
  eachField(buf, 0, buf.length, (f, w, s, e) => {
    if (f !== 1 || w !== 2) return;
    eachField(buf, s, e, (f, w, s, e) => {
      if (f !== 2 || w !== 2) return;
      eachField(buf, s, e, (f, w, s, e) => {
        if (f !== 2 || w !== 2) return;
        let traceId = '';
        const times: number[] = [];
        let startNs = 0n;
        eachField(buf, s, e, (f, w, s, e) => {
          if (f === 1 && w === 2) traceId = buf.toString('hex', s, e);
          else if ((f === 7 || f === 8) && w === 1) {
            times.push(s);
            if (f === 7) startNs = buf.readBigUInt64LE(s);
          } else if (f === 11 && w === 2)
            eachField(buf, s, e, (f, w, s) => {
              if (f === 1 && w === 1) times.push(s);
            });
        });
        const shift = shiftFor(traceId, startNs);
        for (const at of times) buf.writeBigUInt64LE(buf.readBigUInt64LE(at) + shift, at);
        spans++;
      });
    });
  });
  return spans;
}

/** Metric kinds in Metric (gauge 5, sum 7, histogram 9, exponential histogram 10, summary 11). */
const METRIC_DATA = new Set([5, 7, 9, 10, 11]);
/** Where each data point kind keeps its exemplars (number 5, histogram 8, exponential 11; summary none). */
const EXEMPLARS: Record<number, number> = { 5: 5, 7: 5, 9: 8, 10: 11 };

/**
 * Moves every time of a metrics body in place (fixed64, lengths never change):
 * ExportMetricsServiceRequest.resource_metrics(1) > ScopeMetrics(2) >
 * Metric(2) > gauge/sum/histogram/exponential_histogram/summary >
 * data_points(1): start(2), time(3), exemplars > time(2). Each time maps on
 * its own (`mapNs`), so a cumulative series keeps one start across exports.
 * Unset times (0) stay unset. Returns the data points moved.
 */
export function shiftMetricTimes(buf: Buffer, mapNs: (ns: bigint) => bigint): number {
  let points = 0;
  const move = (at: number) => {
    const ns = buf.readBigUInt64LE(at);
    if (ns !== 0n) buf.writeBigUInt64LE(mapNs(ns), at);
  };
  eachField(buf, 0, buf.length, (f, w, s, e) => {
    if (f !== 1 || w !== 2) return;
    eachField(buf, s, e, (f, w, s, e) => {
      if (f !== 2 || w !== 2) return;
      eachField(buf, s, e, (f, w, s, e) => {
        if (f !== 2 || w !== 2) return;
        eachField(buf, s, e, (kind, w, s, e) => {
          if (!METRIC_DATA.has(kind) || w !== 2) return;
          eachField(buf, s, e, (f, w, s, e) => {
            if (f !== 1 || w !== 2) return;
            points++;
            eachField(buf, s, e, (f, w, s, e) => {
              if ((f === 2 || f === 3) && w === 1) move(s);
              else if (f === EXEMPLARS[kind] && w === 2)
                eachField(buf, s, e, (f, w, s) => {
                  if (f === 2 && w === 1) move(s);
                });
            });
          });
        });
      });
    });
  });
  return points;
}

export interface TestTimeRelay {
  /** Base URL to give exporters (`${url}/v1/traces`). */
  url: string;
  spans: number;
  /** Metric data points moved (OTLP metrics, e.g. the Java agent's). */
  points: number;
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP (protobuf) relay on loopback that moves spans to test time
 * and forwards them to `target` (the server's OTLP base URL), answering with
 * the server's answer. All spans of one trace move by the same amount (the
 * shift of its first span seen), so a caller's and a callee's spans of one
 * call keep their real relative times and pair as they would. Metrics
 * (`/v1/metrics`) move too, each time to the test time of its own instant;
 * logs (`/v1/logs`) pass unchanged.
 */
export async function startTestTimeRelay(clock: TestClock, target: string): Promise<TestTimeRelay> {
  const traceShift = new Map<string, bigint>();
  const shiftFor = (traceId: string, startNs: bigint): bigint => {
    let s = traceShift.get(traceId);
    if (s === undefined) {
      const realMs = Number(startNs / 1_000_000n);
      s = BigInt(Math.round(clock.toTest(realMs) - realMs)) * 1_000_000n;
      if (traceShift.size > 200_000) traceShift.clear();
      traceShift.set(traceId, s);
    }
    return s;
  };
  const relay: TestTimeRelay = { url: '', spans: 0, points: 0, close: async () => {} };
  // A metric time maps on its own: test time of that real instant.
  const mapNs = (ns: bigint): bigint =>
    BigInt(Math.round(clock.toTest(Number(ns) / 1e6) * 1e3)) * 1_000n;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          const type = String(req.headers['content-type'] ?? '');
          const path = req.url ?? '';
          if (
            !['/v1/traces', '/v1/metrics', '/v1/logs'].includes(path) ||
            !type.startsWith('application/x-protobuf')
          ) {
            res.writeHead(415).end('the test-time relay takes OTLP/HTTP protobuf only');
            return;
          }
          // Traces and metrics move to test time; logs pass as they are (the server stores none).
          if (path === '/v1/traces') relay.spans += shiftSpanTimes(body, shiftFor);
          else if (path === '/v1/metrics') relay.points += shiftMetricTimes(body, mapNs);
          const headers: Record<string, string> = { 'content-type': type };
          if (req.headers.authorization) headers.authorization = req.headers.authorization;
          const up = await fetch(`${target}${path}`, { method: 'POST', headers, body });
          res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? '' });
          res.end(Buffer.from(await up.arrayBuffer()));
        } catch (err) {
          res.writeHead(502).end(String(err));
        }
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  relay.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return relay;
}
