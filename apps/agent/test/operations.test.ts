/**
 * Grouping fsyncs into operations and per-minute rates (src/aggregate/fsync-operations.ts),
 * first on a real sequence: the fsync events the agent received from bpftrace while
 * helpers/wal_keeper.py removed 4 batches of 40 files with one directory fsync each, then 4
 * with an fsync after every unlink (fixtures/wal-keeper-fsyncs.json, in arrival order).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HINT_ATTRS } from '@onset/contract';
import { classifySpan } from '@onset/core';
import {
  FsyncOperations,
  OPERATION_DEFAULTS,
  type OperationOptions,
} from '../src/aggregate/fsync-operations.ts';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import type { FsyncEvent, FsyncOperationEvent, FsyncRateEvent, SourceName } from '../src/events.ts';
import { eventToSpan } from '../src/telemetry/spans.ts';

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/wal-keeper-fsyncs.json', import.meta.url), 'utf8'),
) as { pid: number; directory: string; passes: number; files: number; calls: number[][] };

const T0 = 1_789_999_980_000_000_000n; // an epoch in ns, on a minute
const MS = 1_000_000n;

function fsync(
  tid: number,
  startMs: number,
  durMs: number,
  more: Partial<FsyncEvent> = {},
): FsyncEvent {
  return {
    kind: 'fsync',
    source: 'bpftrace' as SourceName,
    call: 'fsync',
    startNs: T0 + BigInt(Math.round(startMs * 1e6)),
    durationNs: Math.round(durMs * 1e6),
    directory: '/var/lib/db/wal',
    pid: 100,
    tid,
    comm: 'walkeeper',
    ...more,
  };
}

function collect(opts: Partial<OperationOptions> = {}) {
  const ops: FsyncOperationEvent[] = [];
  const rates: FsyncRateEvent[] = [];
  const agg = new FsyncOperations({ ...OPERATION_DEFAULTS, ...opts }, (e) =>
    e.kind === 'fsync-operation' ? ops.push(e) : rates.push(e),
  );
  return { agg, ops, rates };
}

const at = (ms: number) => T0 + BigInt(Math.round(ms * 1e6));

describe('fsync operations from a real WAL keeper sequence', () => {
  const realEvents = fixture.calls.map(([tid, start, dur]) =>
    fsync(tid!, start! / 1e6, dur! / 1e6, { pid: fixture.pid, directory: fixture.directory }),
  );

  it('one operation per removal pass: 1 fsync per pass, then one per file', () => {
    const { agg, ops } = collect();
    for (const e of realEvents) agg.add(e);
    agg.flush(at(120_000));
    expect(ops.map((o) => o.count)).toEqual([
      ...Array<number>(fixture.passes).fill(1),
      ...Array<number>(fixture.passes).fill(fixture.files),
    ]);
    const batch = ops.slice(0, fixture.passes);
    const each = ops.slice(fixture.passes);
    for (const o of ops) {
      expect(o).toMatchObject({ directory: fixture.directory, pid: fixture.pid, cut: false });
      // Wall time covers the calls' own time, and the thread's work between them.
      expect(o.durationNs).toBeGreaterThanOrEqual(o.syscallNs);
      expect(o.maxCallNs).toBeLessThanOrEqual(o.syscallNs);
    }
    for (const o of batch) expect(o.durationNs).toBe(o.syscallNs);
    // The operation takes many times longer (what a per-call series cannot show).
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(median(each.map((o) => o.durationNs))).toBeGreaterThan(
      5 * median(batch.map((o) => o.durationNs)),
    );
    // Operations are emitted in time order and do not overlap.
    for (let i = 1; i < ops.length; i++)
      expect(ops[i]!.startNs).toBeGreaterThan(ops[i - 1]!.startNs + BigInt(ops[i - 1]!.durationNs));
  });

  it('holds an operation until no late call can extend it', () => {
    const { agg, ops } = collect();
    for (const e of realEvents) agg.add(e);
    const lastEnd = realEvents.reduce(
      (m, e) => (e.startNs + BigInt(e.durationNs) > m ? e.startNs + BigInt(e.durationNs) : m),
      0n,
    );
    const due = lastEnd + BigInt(OPERATION_DEFAULTS.gapMs + OPERATION_DEFAULTS.latenessMs) * MS;
    agg.flush(due - 1n);
    expect(ops).toHaveLength(2 * fixture.passes - 1);
    expect(agg.held.calls).toBe(fixture.files);
    agg.flush(due);
    expect(ops).toHaveLength(2 * fixture.passes);
    expect(agg.held.calls).toBe(0);
  });

  it('becomes an fsync series named after the directory, apart from the per-call series', () => {
    const { agg, ops } = collect();
    for (const e of realEvents) agg.add(e);
    agg.flush(at(120_000));
    const span = eventToSpan(ops.at(-1)!);
    expect(span.name).toBe(`fsync-burst ${fixture.directory}`);
    expect(span.attributes).toMatchObject({
      'onset.op': 'fsync',
      'onset.operation': 'fsync-burst',
      [HINT_ATTRS.fsyncCount]: fixture.files,
      [HINT_ATTRS.fsyncTotalNs]: ops.at(-1)!.syscallNs,
      'onset.fsync.directory': fixture.directory,
      'onset.fsync.gap_ms': 100,
      'process.pid': fixture.pid,
    });
    expect(span.attributes['file.directory']).toBeUndefined();
    const labels = (s: ReturnType<typeof eventToSpan>) =>
      classifySpan(
        { name: s.name, kind: s.kind, attributes: s.attributes as never },
        { service: 'onset-agent', host: 'h', attrs: {} },
      );
    expect(labels(span)).toMatchObject({
      op: 'fsync',
      view: 'internal',
      name: `fsync-burst ${fixture.directory}`,
    });
    expect(labels(eventToSpan(realEvents[0]!)).name).toBe(fixture.directory);
  });
});

describe('fsync operation boundaries', () => {
  it('calls within the gap join, a longer idle time starts a new operation', () => {
    const { agg, ops } = collect({ gapMs: 100 });
    // 3 calls 50 ms apart, idle 150 ms, 2 more.
    for (const [s, d] of [
      [0, 2],
      [52, 2],
      [104, 2],
      [256, 3],
      [300, 1],
    ] as const)
      agg.add(fsync(7, s, d));
    agg.flush(at(60_000));
    expect(ops.map((o) => [o.count, Number(o.durationNs) / 1e6])).toEqual([
      [3, 106],
      [2, 45],
    ]);
  });

  it('threads and directories are separate operations even when interleaved', () => {
    const { agg, ops } = collect();
    for (let i = 0; i < 10; i++) {
      agg.add(fsync(1, i * 10, 1));
      agg.add(fsync(2, i * 10 + 5, 1));
      agg.add(fsync(1, i * 10 + 2, 1, { directory: '/var/lib/db/base' }));
    }
    agg.flush(at(60_000));
    const byKey = ops.map((o) => `${o.tid} ${o.directory} ${o.count}`).sort();
    expect(byKey).toEqual([
      '1 /var/lib/db/base 10',
      '1 /var/lib/db/wal 10',
      '2 /var/lib/db/wal 10',
    ]);
  });

  it('a thread that never idles is cut at the maximum length', () => {
    const { agg, ops } = collect({ maxBurstMs: 1_000 });
    for (let i = 0; i < 250; i++) agg.add(fsync(3, i * 10, 5)); // 2.5 s of calls every 10 ms
    agg.flush(at(60_000));
    expect(ops.map((o) => o.count)).toEqual([100, 100, 50]);
    expect(ops.map((o) => o.cut)).toEqual([true, true, false]);
    expect(eventToSpan(ops[0]!).attributes['onset.fsync.cut']).toBe(true);
  });

  it('out-of-order arrival (another CPU printed later) does not split an operation', () => {
    const { agg, ops } = collect();
    const calls = [0, 20, 40, 60, 80].map((s) => fsync(4, s, 3));
    for (const e of [calls[0], calls[3], calls[1], calls[4], calls[2]]) agg.add(e!);
    agg.flush(at(60_000));
    expect(ops.map((o) => o.count)).toEqual([5]);
  });

  it('a call arriving after its operation was sent starts a new one', () => {
    const { agg, ops } = collect();
    agg.add(fsync(5, 0, 1));
    agg.flush(at(10_000));
    agg.add(fsync(5, 50, 1));
    agg.flush(at(20_000));
    expect(ops.map((o) => o.count)).toEqual([1, 1]);
  });

  it('skips the agent’s own probe fsyncs and syncfs; counts failures', () => {
    const { agg, ops } = collect();
    agg.add(fsync(6, 0, 1, { source: 'probe', probe: 'wal' }));
    agg.add(fsync(6, 1, 1, { call: 'syncfs' }));
    agg.add(fsync(6, 2, 1, { call: 'fdatasync' }));
    agg.add(fsync(6, 4, 1, { error: 'EIO' }));
    agg.flush(at(60_000));
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ count: 2, errors: 1 });
    expect(ops[0]!.error).toBeUndefined();
  });

  it('shutdown sends what is still open', () => {
    const { agg, ops, rates } = collect();
    agg.add(fsync(8, 0, 1));
    agg.flush(at(1), true);
    expect(ops).toHaveLength(1);
    expect(rates).toHaveLength(1);
    expect(agg.held).toEqual({ calls: 0, windows: 0 });
  });
});

describe('fsync rates per process name and minute', () => {
  it('calls per second and time in fsync per second, per window', () => {
    const { agg, rates } = collect();
    // Minute 0: 120 calls of 2 ms from two processes of one program; minute 1: 6 calls of 8 ms.
    for (let i = 0; i < 120; i++) agg.add(fsync(10 + (i % 2), i * 400, 2, { pid: 200 + (i % 2) }));
    for (let i = 0; i < 6; i++) agg.add(fsync(10, 60_000 + i * 5_000, 8, { pid: 200 }));
    agg.flush(at(60_000 + 5_000)); // minute 0 is complete, minute 1 is not
    expect(rates).toHaveLength(1);
    expect(rates[0]).toMatchObject({
      comm: 'walkeeper',
      calls: 120,
      syscallNs: 240_000_000,
      processes: 2,
      windowMs: 60_000,
      startNs: T0,
    });
    // 240 ms in fsync over 60 s = 4 ms per second.
    expect(rates[0]!.durationNs).toBe(4_000_000);
    const span = eventToSpan(rates[0]!);
    expect(span.name).toBe('fsync-rate walkeeper');
    expect(span.attributes).toMatchObject({
      'onset.op': 'fsync',
      'onset.operation': 'fsync-rate',
      'onset.fsync.calls': 120,
      'onset.fsync.calls_per_s': 2,
      'onset.processes': 2,
    });
    agg.flush(at(200_000));
    expect(rates.map((r) => [r.calls, r.durationNs])).toEqual([
      [120, 4_000_000],
      [6, 800_000],
    ]);
  });

  it('folds generated process names into one series', () => {
    const { agg, rates } = collect();
    agg.add(fsync(1, 0, 1, { comm: 'tmp.Xk3Fa9q' }));
    agg.add(fsync(2, 10, 1, { comm: 'tmp.Zq81LmN', pid: 101 }));
    agg.flush(at(120_000));
    expect(rates.map((r) => [r.comm, r.calls])).toEqual([['tmp.*', 2]]);
  });
});

describe('operations config', () => {
  const withFile = <T>(yaml: string, f: (file: string) => T): T => {
    const dir = mkdtempSync(path.join(tmpdir(), 'onset-ops-cfg-'));
    try {
      const file = path.join(dir, 'agent.yaml');
      writeFileSync(file, yaml);
      return f(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('defaults to the documented gap, cut, window and lateness', () => {
    expect(loadConfig({}, {}).operations).toEqual({
      enabled: true,
      fsyncGapMs: 100,
      maxBurstMs: 10_000,
      windowMs: 60_000,
      latenessMs: 5_000,
    });
  });

  it('reads them from the config file and refuses nonsense with a clear message', () => {
    const yaml = 'operations: { fsyncGap: 250ms, maxBurst: 30s, window: 5m, lateness: 1s }\n';
    expect(withFile(yaml, (config) => loadConfig({ config }, {}).operations)).toEqual({
      enabled: true,
      fsyncGapMs: 250,
      maxBurstMs: 30_000,
      windowMs: 300_000,
      latenessMs: 1_000,
    });
    expect(() =>
      withFile('operations: { fsyncGap: 2s, maxBurst: 1s }\n', (config) =>
        loadConfig({ config }, {}),
      ),
    ).toThrow(new ConfigError('operations.maxBurst must be at least operations.fsyncGap'));
    expect(() =>
      withFile('operations: { fsyncGap: 0 }\n', (config) => loadConfig({ config }, {})),
    ).toThrow(/operations.fsyncGap must be more than 0/);
  });
});
