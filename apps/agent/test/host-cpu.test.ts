/**
 * The host's CPU contention (docs/agent.md "Host CPU contention"): the sampler over proc files
 * written to a temp dir in the kernel's formats, the wall-clock windows it is read in, and the
 * spans that carry it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import type { HostCpuEvent } from '../src/events.ts';
import { CpuContentionSampler, parseProcStat } from '../src/host/cpu-contention.ts';
import { HostCpuWindows } from '../src/host/cpu-windows.ts';
import { eventToSpan } from '../src/telemetry/spans.ts';

let proc: string;
beforeEach(() => {
  proc = mkdtempSync(path.join(os.tmpdir(), 'onset-proc-'));
});
afterEach(() => rmSync(proc, { recursive: true, force: true }));

interface Jiffies {
  user: number;
  system: number;
  idle: number;
  steal: number;
  /** Already counted in user (the kernel adds it to both): must not be counted twice. */
  guest?: number;
}

/** /proc/stat as the kernel writes it, for two CPUs splitting the aggregate evenly. */
function writeStat(j: Jiffies): void {
  const line = (name: string, d: number) =>
    `${name} ${j.user / d} 0 ${j.system / d} ${j.idle / d} 0 0 0 ${j.steal / d} ${(j.guest ?? 0) / d} 0`;
  writeFileSync(
    path.join(proc, 'stat'),
    [
      line('cpu ', 1),
      line('cpu0', 2),
      line('cpu1', 2),
      'intr 9 0 9 0',
      'ctxt 123456',
      'btime 1700000000',
      'processes 4242',
      '',
    ].join('\n'),
  );
}

/** /proc/pressure/cpu with the `some` line's cumulative µs. */
function writePressure(someUs: number): void {
  mkdirSync(path.join(proc, 'pressure'), { recursive: true });
  writeFileSync(
    path.join(proc, 'pressure/cpu'),
    `some avg10=1.20 avg60=0.80 avg300=0.50 total=${someUs}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`,
  );
}

describe('CPU contention sampler', () => {
  it('reads steal per CPU time wanted and pressure per wall time between two readings', () => {
    const s = new CpuContentionSampler(proc);
    writeStat({ user: 4000, system: 2000, idle: 12000, steal: 2000, guest: 1000 });
    writePressure(5_000_000);
    expect(s.support('linux')).toEqual({ ok: true, pressure: true });
    expect(s.sample(1_000)).toBeUndefined(); // the baseline

    // 10 s later on 2 CPUs at USER_HZ 100: 2,000 jiffies, 1,000 idle, and 200 of the 1,000 the
    // host wanted stolen (guest time is already in user: counting it again would make it 1,200);
    // some task waited 1.5 s.
    writeStat({ user: 4500, system: 2300, idle: 13000, steal: 2200, guest: 1200 });
    writePressure(6_500_000);
    const c = s.sample(11_000)!;
    expect(c.cpus).toBe(2);
    expect(c.measurements).toEqual([
      { metric: 'steal', msPerS: 200 },
      { metric: 'pressure', msPerS: 150 },
    ]);
  });

  it('reports steal only on a kernel without PSI, and says why', () => {
    const s = new CpuContentionSampler(proc);
    writeStat({ user: 100, system: 100, idle: 800, steal: 0 });
    const support = s.support('linux');
    expect(support).toMatchObject({ ok: true, pressure: false });
    expect(support.ok && !support.pressure && support.noPressure).toMatch(
      /pressure\/cpu: ENOENT \(a kernel without PSI/,
    );
    s.sample(0);
    writeStat({ user: 350, system: 200, idle: 1400, steal: 50 }); // 400 wanted, 50 stolen
    expect(s.sample(5_000)).toEqual({ cpus: 2, measurements: [{ metric: 'steal', msPerS: 125 }] });
  });

  it('skips an interval whose counters went backwards, and measures from the reset on', () => {
    const s = new CpuContentionSampler(proc);
    writeStat({ user: 5000, system: 1000, idle: 9000, steal: 1000 });
    writePressure(9_000_000);
    s.sample(0);
    writeStat({ user: 100, system: 50, idle: 800, steal: 50 }); // counters restarted (a restored VM)
    writePressure(100_000);
    expect(s.sample(1_000)).toBeUndefined();
    writeStat({ user: 300, system: 150, idle: 1450, steal: 50 });
    writePressure(300_000);
    expect(s.sample(2_000)?.measurements).toEqual([
      { metric: 'steal', msPerS: 0 },
      { metric: 'pressure', msPerS: 200 },
    ]);

    // PSI alone going backwards skips the interval too.
    writeStat({ user: 400, system: 200, idle: 1750, steal: 100 });
    writePressure(200_000);
    expect(s.sample(3_000)).toBeUndefined();
  });

  it('is off, with the reason, without Linux or /proc/stat', () => {
    const s = new CpuContentionSampler(proc);
    expect(s.support('darwin')).toEqual({ ok: false, reason: 'not Linux (darwin)' });
    expect(s.support('linux')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/cannot read .*\/stat: ENOENT/),
    });
    expect(s.sample(0)).toBeUndefined();
    expect(s.sample(1_000)).toBeUndefined();
  });

  it("parses this host's real /proc/stat", () => {
    const t = parseProcStat(
      'cpu  356699 0 140504 4643684 3088 0 5273 32662 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\n',
    );
    expect(t).toEqual({
      totalJiffies: 5_181_910,
      idleJiffies: 4_646_772,
      stealJiffies: 32_662,
      cpus: 2,
    });
    expect(parseProcStat('cpu  1 2 3 4\n')).toBeUndefined(); // no steal field
  });
});

describe('host CPU windows', () => {
  const W = 10_000;
  const T0 = 1_700_000_000_000; // a multiple of W

  function run(): { windows: HostCpuWindows; events: HostCpuEvent[] } {
    const events: HostCpuEvent[] = [];
    return {
      windows: new HostCpuWindows(new CpuContentionSampler(proc), W, (e) => events.push(e)),
      events,
    };
  }

  it('sends whole windows of the wall clock, read at their ends, from the second end on', () => {
    const { windows, events } = run();
    writeStat({ user: 0, system: 0, idle: 0, steal: 0 });
    writePressure(0);
    windows.tick(T0 + 3_700, 100); // started mid-window: no baseline yet
    windows.tick(T0 + 9_900, 6_300);
    writeStat({ user: 100, system: 0, idle: 1000, steal: 10 });
    windows.tick(T0 + W + 200, 6_600); // the first end: the baseline
    expect(events).toEqual([]);
    writeStat({ user: 280, system: 0, idle: 2800, steal: 30 }); // 2,000 jiffies, 200 wanted, 20 stolen
    writePressure(400_000);
    windows.tick(T0 + 2 * W + 300, 16_600);
    windows.tick(T0 + 2 * W + 800, 17_100); // same window: nothing more
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'host-cpu',
        source: 'proc',
        metric: 'steal',
        msPerS: 100,
        durationNs: 100e6,
        windowMs: W,
        cpus: 2,
        startNs: BigInt(T0 + W) * 1_000_000n,
      }),
      expect.objectContaining({
        metric: 'pressure',
        msPerS: 40, // 0.4 s of waiting in the 10 s between the readings
        startNs: BigInt(T0 + W) * 1_000_000n,
      }),
    ]);
  });

  it('skips what a stalled agent missed, and sends the last window so far at shutdown', () => {
    const { windows, events } = run();
    writeStat({ user: 0, system: 0, idle: 0, steal: 0 });
    windows.tick(T0 + 500, 0);
    windows.tick(T0 + W + 100, 10_000); // baseline
    writeStat({ user: 200, system: 0, idle: 3800, steal: 0 });
    windows.tick(T0 + 3 * W + 100, 30_000); // two ends at once: not a window, a new baseline
    expect(events).toEqual([]);
    writeStat({ user: 1100, system: 0, idle: 4700, steal: 100 }); // 1,000 wanted, 100 stolen
    windows.flush(T0 + 3 * W + 5_000, 34_900);
    expect(events).toEqual([
      expect.objectContaining({
        metric: 'steal',
        msPerS: 100,
        windowMs: 5_000,
        startNs: BigInt(T0 + 3 * W) * 1_000_000n,
      }),
    ]);
  });
});

describe('host CPU spans', () => {
  const event = (metric: 'steal' | 'pressure', msPerS: number): HostCpuEvent => ({
    kind: 'host-cpu',
    source: 'proc',
    metric,
    msPerS,
    windowMs: 60_000,
    cpus: 2,
    startNs: 1_700_000_040_000n * 1_000_000n,
    durationNs: msPerS * 1e6,
  });

  it('names the series cpu-steal / cpu-pressure, op host, the value as the duration in ms', () => {
    const steal = eventToSpan(event('steal', 37.5));
    expect(steal).toMatchObject({
      name: 'cpu-steal',
      kind: SpanKind.INTERNAL,
      startNs: 1_700_000_040_000n * 1_000_000n,
      durationNs: 37.5e6,
    });
    expect(steal.attributes).toEqual({
      'onset.op': 'host',
      'onset.source': 'proc',
      'onset.window_ms': 60_000,
      'onset.host.cpus': 2,
      'onset.host.ratio': 0.0375,
    });
    expect(eventToSpan(event('pressure', 120)).name).toBe('cpu-pressure');
  });

  it('sends a window without contention as a 0-length span', () => {
    const idle = eventToSpan(event('steal', 0));
    expect(idle).toMatchObject({ name: 'cpu-steal', durationNs: 0 });
    expect(idle.attributes['onset.host.ratio']).toBe(0);
  });
});
