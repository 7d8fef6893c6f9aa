/**
 * Exemplar sampling shared by several servers (otlp/exemplars.ts,
 * otlp/exemplar-rates.ts), with two real server processes on one embedded
 * PostgreSQL behind a pretend load balancer: once both have read the pairs'
 * cluster-wide rates, a minute's exemplars are the spans whose trace id falls
 * under its pair's keep rate, whichever server got them, plus each server's
 * running lowest (so no minute with spans is without exemplars). The same
 * spans routed two different ways keep the same core; a busy minute split
 * over two servers no longer gets each server's own first 20 and thinning.
 * One server decodes on its main thread, the other in a worker thread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startServerProcess, type ServerProcess } from '@onset/testkit';
import { mulberry32 } from '@onset/testkit/random';
import { createPool, type Pool } from '../src/db/pool.ts';
import { exemplarTarget, keepRate, traceUnit } from '../src/otlp/exemplars.ts';

const MIN = 60_000;
const BUSY = 3000; // spans a minute of each busy pair
const QUIET = 4;

type Proc = ServerProcess;

let databaseUrl: string;
let pool: Pool;
const servers: Proc[] = [];

function startServer(env: Record<string, string> = {}): Promise<Proc> {
  return startServerProcess(databaseUrl, { ONSET_EXEMPLAR_RATE_INTERVAL: '500ms', ...env });
}

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  // One after the other: the first migrates. The second decodes in a worker thread, which
  // gets the rates from its main thread.
  servers.push(await startServer());
  servers.push(await startServer({ ONSET_INGEST_WORKERS: '1' }));
  pool = createPool(databaseUrl, 2);
}, 120_000);

afterAll(async () => {
  for (const s of servers) {
    if (s.proc.exitCode !== null) {
      console.error(`a server had exited (${s.proc.exitCode}):`, s.output().slice(-3000));
      continue;
    }
    const exited = new Promise((r) => s.proc.once('exit', r));
    s.proc.kill('SIGTERM');
    await exited;
  }
  await pool?.end();
});

interface Span {
  traceId: string;
  spanId: string;
  startMs: number;
}

const rand = mulberry32(18);
const hex = (bytes: number) =>
  Array.from({ length: bytes }, () =>
    Math.floor(rand() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');

/** `n` spans spread over the minute starting at `minute`. */
function spans(n: number, minute: number): Span[] {
  return Array.from({ length: n }, (_, i) => ({
    traceId: hex(16),
    spanId: hex(8),
    startMs: minute + Math.floor((i * 59_000) / n),
  }));
}

/** One OTLP/JSON export of one service's spans to one server; resolves after its commit. */
async function send(to: Proc, service: string, list: Span[]): Promise<void> {
  const body = {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'host.name', value: { stringValue: 'node-1' } },
          ],
        },
        scopeSpans: [
          {
            spans: list.map((s) => {
              const start = BigInt(s.startMs) * 1_000_000n;
              return {
                traceId: s.traceId,
                spanId: s.spanId,
                name: 'GET /x',
                kind: 2,
                startTimeUnixNano: start.toString(),
                endTimeUnixNano: (start + 2_000_000n).toString(),
                attributes: [{ key: 'http.route', value: { stringValue: '/x' } }],
              };
            }),
          },
        ],
      },
    ],
  };
  const res = await fetch(`${to.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Send in exports of 100, each to the server `route` picks (a load balancer). */
async function sendRouted(service: string, list: Span[], route: (i: number) => Proc) {
  for (let i = 0; i < list.length; i += 100)
    await send(route(i / 100), service, list.slice(i, i + 100));
}

async function gauge(p: Proc, name: string): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

async function exemplarsOf(service: string, minute: number): Promise<Set<string>> {
  const { rows } = await pool.query<{ t: string; s: string }>(
    `SELECT encode(o.trace_id, 'hex') AS t, encode(o.span_id, 'hex') AS s
       FROM observations o JOIN series x ON x.id = o.series_id
      WHERE x.service = $1 AND o.exemplar AND o.start_time >= $2 AND o.start_time < $3`,
    [service, new Date(minute), new Date(minute + MIN)],
  );
  return new Set(rows.map((r) => r.s));
}

const unit = (s: Span) => traceUnit(Buffer.from(s.traceId, 'hex'));

/** Spans a server keeps for being the lowest it has seen so far in that minute (in arrival order). */
function runningLowest(arrived: Span[]): Span[] {
  let low = 1;
  return arrived.filter((s) => {
    const u = unit(s);
    if (u >= low) return false;
    low = u;
    return true;
  });
}

describe('exemplars with two servers on one database', () => {
  const now = Date.now();
  const floor = Math.floor(now / MIN) * MIN;
  const sampled = floor - 10 * MIN; // outside the minutes the rates are read from

  it('both servers read the same cluster-wide keep rate for each pair', async () => {
    // Eight minutes of steady traffic (up to the current one), every other export to the other
    // server: whichever two closed minutes a refresh reads, a busy pair stored BUSY a minute.
    let k = 0;
    for (let m = floor - 7 * MIN; m <= floor; m += MIN)
      for (const service of ['ex-a', 'ex-b', 'ex-quiet'])
        await sendRouted(
          service,
          spans(service === 'ex-quiet' ? QUIET : BUSY, m),
          () => servers[k++ % 2]!,
        );
    const until = Date.now() + 30_000;
    for (;;) {
      const known = await Promise.all(servers.map((s) => gauge(s, 'onset_exemplar_rate_pairs')));
      if (known.every((n) => n >= 3)) break;
      if (Date.now() > until) throw new Error(`rates not read: ${known.join(', ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 120_000);

  it('keeps the spans under the keep rate whichever server got them, plus each server’s running lowest', async () => {
    const minuteSpans = spans(BUSY, sampled);
    // The same traces for the twin pair (span ids of its own: one span is stored once).
    const twin = minuteSpans.map((s) => ({ ...s, spanId: hex(8) }));
    // ex-a: alternate exports to the two servers; ex-b: every export to the first.
    await sendRouted('ex-a', minuteSpans, (i) => servers[i % 2]!);
    await sendRouted('ex-b', twin, () => servers[0]!);
    const quiet = spans(3, sampled);
    await sendRouted('ex-quiet', quiet, () => servers[1]!);

    const rate = keepRate(BUSY);
    const core = (list: Span[]) => list.filter((s) => unit(s) < rate).map((s) => s.spanId);
    const byServer = [0, 1].map((k) => minuteSpans.filter((_, i) => Math.floor(i / 100) % 2 === k));
    const wantA = new Set([
      ...core(minuteSpans),
      ...byServer.flatMap((l) => runningLowest(l)).map((s) => s.spanId),
    ]);
    const wantB = new Set([...core(twin), ...runningLowest(twin).map((s) => s.spanId)]);
    const a = await exemplarsOf('ex-a', sampled);
    const b = await exemplarsOf('ex-b', sampled);
    expect([...a].sort()).toEqual([...wantA].sort());
    expect([...b].sort()).toEqual([...wantB].sort());
    // The core is the same traces for both routings, and most of what is kept.
    const traceOf = new Map([...minuteSpans, ...twin].map((s) => [s.spanId, s.traceId]));
    const coreTraces = new Set(core(minuteSpans).map((id) => traceOf.get(id)));
    expect(new Set(core(twin).map((id) => traceOf.get(id)))).toEqual(coreTraces);
    expect(coreTraces.size).toBeGreaterThan(0.6 * exemplarTarget(BUSY));
    expect(coreTraces.size).toBeLessThan(1.4 * exemplarTarget(BUSY));
    // About one server's worth (20 × (1 + ln 150) ≈ 120), not two (each server's own first
    // 20 and thinning over its 1,500 spans: 2 × 20 × (1 + ln 75) ≈ 212).
    expect(a.size).toBeLessThan(coreTraces.size + 2 * (1 + Math.log(BUSY / 2)));
    // A quiet pair keeps every span.
    expect((await exemplarsOf('ex-quiet', sampled)).size).toBe(3);
  });

  it('every (series, resource, minute) with spans has exemplars', async () => {
    const { rows } = await pool.query<{ minute: Date; service: string }>(
      `SELECT h.minute, x.service FROM histograms h JOIN series x ON x.id = h.series_id
        GROUP BY h.series_id, h.resource_id, h.minute, x.service
       HAVING NOT EXISTS (SELECT 1 FROM observations o
                           WHERE o.series_id = h.series_id AND o.resource_id = h.resource_id AND o.exemplar
                             AND o.start_time >= h.minute AND o.start_time < h.minute + interval '1 minute')`,
    );
    expect(rows).toEqual([]);
    const { rows: n } = await pool.query<{ n: number }>(
      `SELECT count(DISTINCT (series_id, resource_id, minute))::int AS n FROM histograms`,
    );
    expect(n[0]!.n).toBe(3 * 9);
  });
});
