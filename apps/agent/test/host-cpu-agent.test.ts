/**
 * The host's CPU contention through the real agent into a real Onset server (docs/agent.md
 * "Host CPU contention"): with a 1 s window the agent reads this host's /proc each window of the
 * wall clock and sends `cpu-steal` and `cpu-pressure` spans (op host), stored as the host series
 * of its service; with more busy loops than CPUs the pressure is near 1000 ms/s; with
 * `host.cpu` off it sends none. Skips with a message off Linux.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { HostCpuEvent } from '../src/events.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { waitForSeries } from './helpers/onset.ts';

const missing = process.platform === 'linux' ? null : 'needs Linux (/proc)';
if (missing) console.warn(`host-cpu-agent.test.ts skipped: ${missing}`);
const psi = existsSync('/proc/pressure/cpu');
if (!missing && !psi) console.warn('host-cpu-agent.test.ts: no /proc/pressure/cpu, steal only');

const SERVICE = 'agent-host-cpu-test';
const WINDOW_MS = 1_000;
let server: TestServer;
const agents: TestAgent[] = [];

async function agent(service: string, hostCpu: boolean): Promise<TestAgent> {
  const ta = await startTestAgent({
    flags: { endpoint: server.otlpUrl, serviceName: service, bpftrace: false, strace: false },
    tune: (c) => {
      c.operations.windowMs = WINDOW_MS;
      c.export.flushIntervalMs = 200;
      c.host.cpu = hostCpu;
    },
  });
  agents.push(ta);
  return ta;
}

const hostCpu = (ta: TestAgent, metric: HostCpuEvent['metric']) =>
  ta.events.filter((e): e is HostCpuEvent => e.kind === 'host-cpu' && e.metric === metric);

beforeAll(async () => {
  if (!missing) server = await startTestServer();
});

afterAll(async () => {
  for (const a of agents) await a.stop();
  await server?.close();
});

describe.skipIf(missing)('host CPU contention from a real agent', () => {
  it('sends cpu-steal and cpu-pressure per window of the wall clock, stored as host series', async () => {
    const ta = await agent(SERVICE, true);
    expect(ta.logs.join('\n')).toContain(
      psi
        ? 'host CPU: reporting stolen time (cpu-steal) and CPU pressure (cpu-pressure) every 1 s'
        : 'host CPU: reporting stolen time (cpu-steal) every 1 s',
    );
    await ta.waitFor(
      'two windows of host CPU',
      () => hostCpu(ta, 'steal').length >= 2 && (!psi || hostCpu(ta, 'pressure').length >= 2),
      10_000,
    );

    const steal = hostCpu(ta, 'steal');
    for (const e of [...steal, ...hostCpu(ta, 'pressure')]) {
      expect(e).toMatchObject({ source: 'proc', windowMs: WINDOW_MS, cpus: os.cpus().length });
      expect(e.startNs % BigInt(WINDOW_MS * 1e6)).toBe(0n); // on the wall clock's window grid
      expect(e.msPerS).toBeGreaterThanOrEqual(0);
      expect(e.msPerS).toBeLessThanOrEqual(1000);
      expect(e.durationNs).toBe(e.msPerS * 1e6);
    }
    // Whole windows, one after the other, the first one ending after the agent's first window end.
    expect(steal[1]!.startNs - steal[0]!.startNs).toBe(BigInt(WINDOW_MS * 1e6));

    await ta.agent.flush();
    for (const name of psi ? ['cpu-steal', 'cpu-pressure'] : ['cpu-steal']) {
      const { series, count } = await waitForSeries(
        server.url,
        { service: SERVICE, op: 'host' },
        (s) => s.name === name,
        2,
      );
      expect(series).toMatchObject({ op: 'host', view: 'internal', hosts: [os.hostname()] });
      expect(count).toBeGreaterThanOrEqual(2);
    }
  });

  it.skipIf(!psi)(
    'reads CPU pressure in ms per second: with more busy loops than CPUs some task always waits',
    async () => {
      const ta = await agent(`${SERVICE}-busy`, true);
      const burners: ChildProcess[] = [];
      // Windows that start once every loop runs, and end before they are stopped.
      let from = 0n;
      try {
        for (let i = 0; i < 3 * os.cpus().length; i++)
          burners.push(spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
        from = BigInt(Date.now() + 100) * 1_000_000n;
        await ta.waitFor(
          'a window while the loops ran',
          () => hostCpu(ta, 'pressure').some((e) => e.startNs >= from),
          10_000,
        );
      } finally {
        for (const b of burners) b.kill('SIGKILL');
      }
      const busy = hostCpu(ta, 'pressure').filter((e) => e.startNs >= from);
      // Three runnable loops a CPU: some task waits nearly all the time.
      for (const e of busy) expect(e.msPerS).toBeGreaterThan(500);
    },
  );

  it('sends no host CPU series with host.cpu off, and says so', async () => {
    const ta = await agent(`${SERVICE}-off`, false);
    expect(ta.logs.join('\n')).toContain('host CPU: not reported (host.cpu is false)');
    await new Promise((r) => setTimeout(r, 2.5 * WINDOW_MS));
    expect(ta.events.filter((e) => e.kind === 'host-cpu')).toEqual([]);
  });
});
