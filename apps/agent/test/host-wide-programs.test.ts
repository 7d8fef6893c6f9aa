/**
 * A host-wide agent (no --pid, --comm or --cgroup) on real system calls: a
 * program with no agent of its own has its fsyncs stored under its own
 * service name, not the agent's, with the host's name and kernel on its
 * series; the agent's own host series stay under the agent's name. Skips
 * with a message without root or bpftrace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { bpftraceSkipReason } from './helpers/requirements.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries, waitForSeries } from './helpers/onset.ts';
import { startHelper } from './helpers/processes.ts';

const missing = bpftraceSkipReason();
if (missing) console.warn(`host-wide-programs.test.ts skipped: ${missing}`);

const AGENT = 'agent-host-wide-test';
const PROGRAM = 'onset-unclaimed';
let server: TestServer;
let ta: TestAgent;
const work = missing ? '' : mkdtempSync('/var/tmp/onset-agent-unclaimed-');

beforeAll(async () => {
  if (missing) return;
  server = await startTestServer();
  ta = await startTestAgent({
    flags: { endpoint: server.otlpUrl, serviceName: AGENT, strace: false },
    tune: (c) => {
      c.export.flushIntervalMs = 200;
      c.operations.windowMs = 1_000;
    },
  });
  const h = startHelper('wal_keeper.py', [PROGRAM, path.join(work, 'wal'), '2', '20']);
  await h.waitLine('done', 60_000);
  await h.exited;
}, 120_000);

afterAll(async () => {
  await ta?.stop();
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(missing)('a host-wide agent and a program with no agent of its own', () => {
  it('stores the program’s fsyncs under the program’s name, on this host', async () => {
    await ta.agent.flush();
    const { series, count } = await waitForSeries(
      server.url,
      { service: PROGRAM, op: 'fsync' },
      (s) => s.view === 'internal',
      20,
      30_000,
    );
    expect(series.service).toBe(PROGRAM);
    expect(series.hosts).toContain(os.hostname());
    expect(count).toBeGreaterThanOrEqual(20);
    // None of the program's fsyncs went out under the agent's name.
    const underAgent = await listSeries(server.url, { service: AGENT, op: 'fsync' });
    expect(underAgent.map((s) => s.name)).not.toContain(series.name);
  });

  it('keeps the agent’s own host series under the agent’s name', async () => {
    await waitForSeries(
      server.url,
      { service: AGENT, op: 'host' },
      (s) => s.name === 'cpu-steal',
      1,
      30_000,
    );
  });
});
