/**
 * The strace fallback on this machine, for real: attach to a waiting
 * workload by pid, let it fsync, spawn and mount/unmount, and check the same
 * kinds of spans arrive at a real Onset server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { SpawnEvent, UnmountEvent } from '../src/events.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { expectWorkloadSeries } from './helpers/onset.ts';
import { startHelper, type Helper } from './helpers/processes.ts';

const SERVICE = 'agent-strace-test';
let server: TestServer;
let ta: TestAgent;
let workload: Helper;
const work = mkdtempSync('/var/tmp/onset-agent-st-');

beforeAll(async () => {
  server = await startTestServer();
  workload = startHelper('workload.py', ['onset-wl-st', work, '--wait']);
  await workload.waitLine('ready');
  ta = await startTestAgent({
    flags: {
      endpoint: server.otlpUrl,
      serviceName: SERVICE,
      pid: [workload.child.pid!],
      bpftrace: false,
    },
    tune: (c) => (c.export.flushIntervalMs = 200),
  });
});

afterAll(async () => {
  workload?.child.kill();
  await ta?.stop();
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

it('attaches to the given pid, says why bpftrace is not used, and traces the workload into Onset', async () => {
  const log = ta.logs.join('\n');
  expect(log).toMatch(/source bpftrace: not used — turned off/);
  expect(log).toMatch(
    new RegExp(`source strace: in use — found .*strace.*attached to pid ${workload.child.pid}`),
  );
  expect(ta.agent.sources).toEqual(['strace']);

  workload.child.stdin!.write('go\n');
  await workload.waitLine('done');
  const dataDir = path.join(work, 'data');
  const mnt = path.join(work, 'mnt');
  await ta.waitFor('workload events', (es) => {
    const fsyncs = es.filter((e) => e.kind === 'fsync' && e.directory === dataDir).length;
    const spawns = es.filter((e) => e.kind === 'spawn' && e.executable === '/bin/true').length;
    const unmounts = es.filter((e) => e.kind === 'unmount' && e.mountPoint === mnt).length;
    return fsyncs >= 25 && spawns >= 10 && unmounts >= 1;
  });

  for (const e of ta.events) {
    expect(e.source).toBe('strace');
    expect(e.durationNs).toBeGreaterThan(0);
    expect(e.durationNs).toBeLessThan(5e9);
  }
  const spawn = ta.events.find((e) => e.kind === 'spawn') as SpawnEvent;
  expect(spawn).toMatchObject({ parentPid: workload.child.pid, parentComm: 'onset-wl-st' });
  expect(spawn.parentFdCount).toBeGreaterThanOrEqual(3);
  expect(spawn.parentRssBytes).toBeGreaterThan(1 << 20);
  const unmount = ta.events.find((e) => e.kind === 'unmount') as UnmountEvent;
  expect(unmount).toMatchObject({ fsType: 'tmpfs', pid: workload.child.pid });
  expect(unmount.dirtyBytes).toBeGreaterThanOrEqual(0);

  await ta.agent.flush();
  await expectWorkloadSeries(server.url, SERVICE, { dataDir, mnt });
});
