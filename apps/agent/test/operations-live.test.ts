/**
 * fsync operations for real: the agent traces helpers/wal_keeper.py through bpftrace while it
 * removes batches of files in a directory on disk, first with one directory fsync per batch,
 * then (from the next minute on) with one after every unlink. The agent must make one
 * `fsync-burst` operation per pass with the right fsync count, and the operation series
 * stored in a real Onset server must show the time per operation rising. Skips with a
 * message without root or bpftrace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HINT_ATTRS } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { FsyncEvent, FsyncOperationEvent } from '../src/events.ts';
import { eventToSpan } from '../src/telemetry/spans.ts';
import { normalizePath } from '../src/telemetry/normalize.ts';
import { bpftraceSkipReason } from './helpers/requirements.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries } from './helpers/onset.ts';
import { startHelper } from './helpers/processes.ts';

const missing = bpftraceSkipReason();
if (missing) console.warn(`operations-live.test.ts skipped: ${missing}`);

const SERVICE = 'agent-operations-test';
const PASSES = 6;
const FILES = 60;
let server: TestServer;
let ta: TestAgent;
// On disk (not /tmp, which may be tmpfs) so directory fsyncs do real work.
const work = missing ? '' : mkdtempSync('/var/tmp/onset-agent-ops-');
const wal = path.join(work, 'wal');

interface Pass {
  mode: 'batch' | 'each';
  fsyncs: number;
  ms: number;
}
const passes: Pass[] = [];
let switchedAtMs = 0;

beforeAll(async () => {
  if (missing) return;
  server = await startTestServer();
  ta = await startTestAgent({
    flags: { endpoint: server.otlpUrl, serviceName: SERVICE, comm: ['onset-walk'], strace: false },
    tune: (c) => (c.export.flushIntervalMs = 200),
  });
  const h = startHelper('wal_keeper.py', [
    'onset-walk',
    wal,
    String(PASSES),
    String(FILES),
    '--hold-switch',
  ]);
  h.child.stdout!.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) {
      const m = /^pass (batch|each) (\d+) ([\d.]+)$/.exec(line);
      if (m) passes.push({ mode: m[1] as Pass['mode'], fsyncs: Number(m[2]), ms: Number(m[3]) });
    }
  });
  await h.waitLine('switch', 60_000);
  // The change happens in a later minute than every batch pass, so the stored per-minute
  // histograms separate before from after.
  await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 1_000));
  switchedAtMs = Date.now();
  h.child.stdin!.write('go\n');
  await h.waitLine('done', 60_000);
  await h.exited;
}, 180_000);

afterAll(async () => {
  await ta?.stop();
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (ns: number) => ns / 1e6;

describe.skipIf(missing)('fsync operations from a traced WAL keeper', () => {
  let ops: FsyncOperationEvent[] = [];
  let onePerPass = false;

  it('one operation per removal pass: 1 fsync per batch, then one per unlink', async () => {
    // Operations leave the agent once no late call can extend them (gap + 5 s).
    await ta.waitFor(
      'fsync-burst operations covering every fsync of the workload',
      (es) =>
        es.reduce(
          (n, e) => n + (e.kind === 'fsync-operation' && e.directory === wal ? e.count : 0),
          0,
        ) >=
        PASSES * (1 + FILES),
      30_000,
    );
    ops = ta.events.filter(
      (e): e is FsyncOperationEvent => e.kind === 'fsync-operation' && e.directory === wal,
    );
    const switchNs = BigInt(switchedAtMs) * 1_000_000n;
    const batch = ops.filter((o) => o.startNs < switchNs);
    const each = ops.filter((o) => o.startNs >= switchNs);
    expect(batch.map((o) => o.count)).toEqual(Array<number>(PASSES).fill(1));
    // A pass is split only if the thread stalled for longer than the gap between two of its
    // unlinks (a 2-core machine shared by many tests): every fsync is counted either way.
    expect(each.reduce((n, o) => n + o.count, 0)).toBe(PASSES * FILES);
    expect(each.filter((o) => o.count === FILES).length).toBeGreaterThanOrEqual(PASSES - 1);
    onePerPass = each.length === PASSES;
    if (onePerPass) expect(passes.map((p) => p.fsyncs)).toEqual(ops.map((o) => o.count));
    for (const o of ops) expect(o).toMatchObject({ comm: 'onset-walk', cut: false, errors: 0 });
    // The operation's calls are exactly the per-call spans of that thread in that window.
    const calls = ta.events.filter(
      (e): e is FsyncEvent => e.kind === 'fsync' && e.directory === wal,
    );
    for (const o of ops) {
      const mine = calls.filter(
        (c) =>
          c.tid === o.tid &&
          c.startNs >= o.startNs &&
          c.startNs + BigInt(c.durationNs) <= o.startNs + BigInt(o.durationNs),
      );
      expect(mine).toHaveLength(o.count);
      expect(mine.reduce((n, c) => n + c.durationNs, 0)).toBe(o.syscallNs);
    }
  });

  it('the operation’s time agrees with the workload’s own timing and rises with the change', () => {
    const batch = ops.filter((o) => o.count === 1);
    const each = ops.filter((o) => o.count === FILES);
    // The workload times its whole removal pass (unlinks included); the operation runs from the
    // first fsync to the last: within the pass, and most of it when there is a fsync per unlink.
    for (const [i, o] of (onePerPass ? ops : []).entries()) {
      expect(ms(o.durationNs)).toBeLessThanOrEqual(passes[i]!.ms + 1);
      if (passes[i]!.mode === 'each') expect(ms(o.durationNs)).toBeGreaterThan(passes[i]!.ms / 2);
    }
    const before = median(batch.map((o) => o.durationNs));
    const after = median(each.map((o) => o.durationNs));
    console.log(
      `fsync-burst: ${ms(before).toFixed(2)} ms per operation with 1 fsync, ` +
        `${ms(after).toFixed(1)} ms with ${FILES} (per fsync ${ms(median(each.map((o) => o.syscallNs / o.count))).toFixed(2)} ms)`,
    );
    expect(after).toBeGreaterThan(5 * before);
    // What is sent: the operation series, the count and the summed time as attributes.
    const span = eventToSpan(each[0]!);
    expect(span.name).toBe(`fsync-burst ${normalizePath(wal)}`);
    expect(span.attributes[HINT_ATTRS.fsyncCount]).toBe(FILES);
    expect(span.attributes[HINT_ATTRS.fsyncTotalNs]).toBe(each[0]!.syscallNs);
    expect(eventToSpan(batch[0]!).attributes[HINT_ATTRS.fsyncCount]).toBe(1);
  });

  it('the stored operation series shows the time per operation rising at the change', async () => {
    await ta.agent.flush();
    expect(ta.agent.stats).toMatchObject({ queued: 0, dropped: 0 });
    const series = (await listSeries(server.url, { service: SERVICE, op: 'fsync' })).find(
      (s) => s.name === `fsync-burst ${normalizePath(wal)}`,
    );
    expect(series, 'the fsync-burst series in Onset').toBeDefined();
    expect(series).toMatchObject({ op: 'fsync', view: 'internal' });
    const res = await fetch(
      `${server.url}/api/v1/series/${series!.id}/quantiles?from=now-15m&step=1m&q=0.5`,
    );
    expect(res.status).toBe(200);
    const points = (
      (await res.json()) as { points: { t: string; count: number; q: Record<string, number> }[] }
    ).points.filter((p) => p.count > 0);
    const switchMinute = switchedAtMs - (switchedAtMs % 60_000);
    const before = points.filter((p) => Date.parse(p.t) < switchMinute);
    const after = points.filter((p) => Date.parse(p.t) >= switchMinute);
    expect(before.reduce((n, p) => n + p.count, 0)).toBe(PASSES);
    expect(after.reduce((n, p) => n + p.count, 0)).toBe(PASSES);
    const p50 = (ps: typeof points) => median(ps.map((p) => p.q['0.5']!));
    expect(p50(after)).toBeGreaterThan(5 * p50(before));
  });
});
