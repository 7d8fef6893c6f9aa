/**
 * Graceful degradation: without bpftrace, without root, without strace the
 * agent runs with what remains, says why in its log, and spans still arrive.
 * The host facts (PATH, uid) are injected; everything else is the real code
 * path on this machine (the agent really starts strace, really runs probes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { findExecutable, realHost } from '../src/host/facts.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { waitForSeries } from './helpers/onset.ts';

let server: TestServer;
let sleeper: ChildProcess;
const scratch = mkdtempSync('/var/tmp/onset-agent-degrade-');
const agents: TestAgent[] = [];

/** A PATH holding only the named tools (symlinks to the real ones). */
function pathWith(tools: string[]): string {
  const dir = mkdtempSync(path.join(scratch, 'bin-'));
  for (const t of tools) symlinkSync(findExecutable(realHost(), t)!, path.join(dir, t));
  return dir;
}

beforeAll(async () => {
  server = await startTestServer();
  sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
});

// One tracer per process: each agent detaches its strace before the next attaches.
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

afterAll(async () => {
  sleeper?.kill();
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function runAgent(service: string, host: { PATH: string; uid: number }): Promise<TestAgent> {
  const ta = await startTestAgent({
    flags: {
      endpoint: server.otlpUrl,
      serviceName: service,
      pid: [sleeper.pid!],
      probes: true,
      once: true,
      probeDir: path.join(scratch, service),
      walFiles: 5,
      spawnExtraFds: 100,
      mountTypes: ['tmpfs'],
      mountMb: 1,
    },
    host: { uid: host.uid, env: { ...process.env, PATH: host.PATH } },
  });
  agents.push(ta);
  await ta.agent.probeRound();
  await ta.agent.flush();
  return ta;
}

describe('graceful degradation', () => {
  it('without bpftrace: uses strace and the probes, and says bpftrace is not installed', async () => {
    const ta = await runAgent('degrade-no-bpftrace', {
      PATH: pathWith(['strace', 'true', 'mount', 'umount']),
      uid: 0,
    });
    const log = ta.logs.join('\n');
    expect(log).toMatch(
      /source bpftrace: not used — bpftrace is not installed \(not found on PATH; Debian package: bpftrace\)/,
    );
    expect(log).toMatch(new RegExp(`source strace: in use — .*attached to pid ${sleeper.pid}`));
    expect(ta.agent.sources).toEqual(['strace', 'probes']);
    await waitForSeries(
      server.url,
      { service: 'degrade-no-bpftrace', op: 'spawn' },
      (s) => s.name === 'true',
      3,
    );
    await waitForSeries(
      server.url,
      { service: 'degrade-no-bpftrace', op: 'unmount' },
      () => true,
      1,
    );
  });

  it('not root: no bpftrace, no mount probe, each with the reason; strace and the other probes still run', async () => {
    const ta = await runAgent('degrade-not-root', {
      PATH: pathWith(['bpftrace', 'strace', 'true', 'mount', 'umount']),
      uid: 1000,
    });
    const log = ta.logs.join('\n');
    expect(log).toMatch(
      /source bpftrace: not used — bpftrace needs root; the agent runs as uid 1000/,
    );
    expect(log).toMatch(/probe mount: skipped — mounting needs root \(running as uid 1000\)/);
    expect(log).toMatch(new RegExp(`source strace: in use — .*attached to pid ${sleeper.pid}`));
    expect(ta.agent.sources).toContain('probes');
    expect(ta.events.some((e) => e.kind === 'unmount')).toBe(false);
    await waitForSeries(
      server.url,
      { service: 'degrade-not-root', op: 'spawn' },
      (s) => s.name === 'true',
      3,
    );
    await waitForSeries(
      server.url,
      { service: 'degrade-not-root', op: 'fsync' },
      (s) => s.name.startsWith('wal-removal'),
      1,
    );
  });

  it('without bpftrace and strace: runs the probes alone and says why', async () => {
    const ta = await runAgent('degrade-probes-only', {
      PATH: pathWith(['true', 'mount', 'umount']),
      uid: 0,
    });
    const log = ta.logs.join('\n');
    expect(log).toMatch(/source bpftrace: not used — bpftrace is not installed/);
    expect(log).toMatch(
      /source strace: not used — strace is not installed \(not found on PATH; Debian package: strace\)/,
    );
    expect(log).toMatch(/running with probes$/m);
    expect(ta.agent.sources).toEqual(['probes']);
    await waitForSeries(
      server.url,
      { service: 'degrade-probes-only', op: 'spawn' },
      (s) => s.name === 'true',
      3,
    );
    await waitForSeries(
      server.url,
      { service: 'degrade-probes-only', op: 'unmount' },
      () => true,
      1,
    );
  });
});
