/**
 * Incident 3 through the agent's operation model into a real Onset server: a WAL keeper
 * that removed 60 files per pass with one directory fsync (≈8 ms) switches to an fsync
 * after every unlink (each ≈2 ms, cheaper). The fsync events go into the real agent
 * (its `record` sink, as a tracer delivers them), which groups them into `fsync-burst`
 * operations and sends per-call and operation spans over OTLP; detection then runs on
 * the server. The per-call series improves; the operation series must open a regression
 * with the fsync-per-operation hint. Times are in the past (2¾ hours), so the run takes
 * seconds; the numbers are the incident's published shape, built here by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression } from '@onset/contract';
import { mulberry32 } from '@onset/testkit/random';
import type { FsyncEvent } from '../src/events.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries } from './helpers/onset.ts';

const SERVICE = 'walkeeper-host';
const WAL = '/var/lib/postgresql/16/main/pg_wal';
const FOLDED = '/var/lib/postgresql/*/main/pg_wal';
const MIN = 60_000;
const PASSES_PER_MIN = 6;
const FILES = 60;

let server: TestServer;
let ta: TestAgent;
const endMs = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const onsetMs = endMs - 45 * MIN;
const fromMs = onsetMs - 120 * MIN;

function lognormal(r: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-12, r());
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r()));
}

/** One removal pass starting at `startMs`: the fsync events bpftrace would deliver. */
function pass(r: () => number, startMs: number, each: boolean): FsyncEvent[] {
  const out: FsyncEvent[] = [];
  let t = startMs;
  const fsync = (ms: number) => {
    out.push({
      kind: 'fsync',
      source: 'bpftrace',
      call: 'fsync',
      startNs: BigInt(Math.round(t * 1e6)),
      durationNs: Math.round(ms * 1e6),
      directory: WAL,
      pid: 4242,
      tid: 4242,
      comm: 'postgres',
    });
    t += ms;
  };
  for (let i = 0; i < FILES; i++) {
    t += 0.05 + r() * 0.1; // the unlink
    if (each) fsync(lognormal(r, 2, 0.3));
  }
  if (!each) fsync(lognormal(r, 8, 0.3));
  return out;
}

beforeAll(async () => {
  server = await startTestServer();
  ta = await startTestAgent({
    // The WAL keeper's own agent (filtered to its program), so its spans are SERVICE's: a
    // host-wide agent would report them under the program's name (docs/agent.md).
    flags: {
      endpoint: server.otlpUrl,
      serviceName: SERVICE,
      comm: ['postgres'],
      bpftrace: false,
      strace: false,
    },
    tune: (c) => (c.export.flushIntervalMs = 200),
  });
  const r = mulberry32(33);
  for (let m = fromMs; m < endMs; m += MIN)
    for (let i = 0; i < PASSES_PER_MIN; i++) {
      const start = m + ((i + 0.5 * r()) * MIN) / PASSES_PER_MIN;
      for (const e of pass(r, start, m >= onsetMs)) ta.agent.record(e);
    }
  const passes = ((endMs - fromMs) / MIN) * PASSES_PER_MIN;
  await ta.waitFor(
    'every pass as an operation',
    (es) => es.filter((e) => e.kind === 'fsync-operation').length >= passes,
  );
  // An OTLP 200 means committed: once the queue is empty, every span is stored.
  await ta.agent.flush();
  expect(ta.agent.stats).toMatchObject({ queued: 0, dropped: 0, failedExports: 0 });
  const res = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ upto: new Date(endMs).toISOString() }),
  });
  expect(res.status).toBe(200);
}, 240_000);

afterAll(async () => {
  await ta?.stop();
  await server?.close();
});

async function regressions(): Promise<Regression[]> {
  const res = await fetch(`${server.url}/api/v1/regressions?service=${SERVICE}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { regressions: Regression[] }).regressions.filter(
    (r) => r.service === SERVICE,
  );
}

describe('fsync per unlink, seen as operations', () => {
  it('the agent made one operation per pass: 1 fsync before, 60 after', () => {
    const ops = ta.events.filter((e) => e.kind === 'fsync-operation');
    const before = ops.filter((o) => Number(o.startNs / 1_000_000n) < onsetMs);
    const after = ops.filter((o) => Number(o.startNs / 1_000_000n) >= onsetMs);
    expect(new Set(before.map((o) => o.count))).toEqual(new Set([1]));
    expect(new Set(after.map((o) => o.count))).toEqual(new Set([FILES]));
  });

  it('opens a regression on the operation series carrying the fsync-per-operation hint', async () => {
    const all = await regressions();
    const op = all.filter((r) => r.name === `fsync-burst ${FOLDED}`);
    expect(
      op.map((r) => `${r.op} ${r.view} ${r.name}`),
      JSON.stringify(all.map((r) => r.name)),
    ).toEqual([`fsync internal fsync-burst ${FOLDED}`]);
    // One incident per step: the operation series heads it (the fsync-rate series of the same
    // program steps in the same minute and may join it as a member).
    expect(op[0]!.members.find((m) => m.headline)?.name).toBe(`fsync-burst ${FOLDED}`);
    const hint = op[0]!.hints[0];
    expect(hint?.id, JSON.stringify(op[0]!.hints)).toBe('fsync-per-operation');
    expect(hint!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(hint!.detail).toMatch(/×60 as many fsyncs/);
    expect(hint!.detail).toMatch(/median 1 → 60 per operation/);
    expect(hint!.detail).toMatch(/no slower: the per-call view does not show this/);
    // The onset is the minute of the change.
    expect(Math.abs(Date.parse(op[0]!.onset) - onsetMs)).toBeLessThanOrEqual(2 * MIN);
  });

  it('the per-call series of the directory got faster and opened nothing', async () => {
    const perCall = (await listSeries(server.url, { service: SERVICE, op: 'fsync' })).find(
      (s) => s.name === FOLDED,
    );
    expect(perCall).toBeDefined();
    expect((await regressions()).filter((r) => r.name === FOLDED)).toEqual([]);
  });
});
