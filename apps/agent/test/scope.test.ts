/**
 * Series hygiene with the real agent and real kernel events (issue 20 item 5):
 *  - a span is one agent's: an agent tracing the whole host leaves processes another agent
 *    reports (here a second agent, run as its own `onset-agent` process with --comm) to that
 *    agent, instead of sending a second copy under its own service;
 *  - host-wide tracing leaves browsers' temporary profiles and package caches out by default,
 *    `scope.exclude` adds paths and `scope.include` brings one back;
 *  - a cap on new series a minute drops, counts and logs spans of series past it.
 * Needs root and bpftrace (skipped with a message otherwise).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { AgentEvent } from '../src/events.ts';
import { bpftraceSkipReason } from './helpers/requirements.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries, waitForSeries } from './helpers/onset.ts';
import { runHelper } from './helpers/processes.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const missing = bpftraceSkipReason();
if (missing) console.warn(`scope.test.ts skipped: ${missing}`);

const work = missing ? '' : mkdtempSync('/var/tmp/onset-scope-');
let server: TestServer;
let host: TestAgent;
let other: ChildProcess | undefined;
let otherLog = '';

/** The other agent: its own process, as a user would run it for one service. */
async function startOtherAgent(): Promise<void> {
  other = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/.bin/onset-agent'),
      '--endpoint',
      server.otlpUrl,
      '--service-name',
      'scope-svc',
      '--comm',
      'onset-svc',
      '--no-probes',
      '--no-strace',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  other.stdout!.on('data', (d) => (otherLog += d));
  other.stderr!.on('data', (d) => (otherLog += d));
  const deadline = Date.now() + 90_000;
  while (!/running with bpftrace/.test(otherLog)) {
    if (Date.now() > deadline || other.exitCode !== null)
      throw new Error(`the other agent did not start: ${otherLog}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  if (missing) return;
  server = await startTestServer();
  await startOtherAgent();
  host = await startTestAgent({
    flags: { endpoint: server.otlpUrl, serviceName: 'scope-host', strace: false },
    tune: (c) => {
      c.export.flushIntervalMs = 200;
      // Everything else on this shared machine makes series too: no cap for this agent.
      c.scope.maxNewSeriesPerMinute = 1_000_000;
      c.scope.exclude = [`${work}/excluded/**`];
      c.scope.include = [`${work}/home/.cache/pip/keep/**`];
    },
  });
}, 180_000);

afterAll(async () => {
  await host?.stop();
  if (other && other.exitCode === null) {
    other.kill('SIGTERM');
    await new Promise((r) => other!.once('exit', r));
  }
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const fsyncDirs = (es: AgentEvent[], comm: string) =>
  new Set(
    es
      .filter((e) => e.kind === 'fsync' && e.comm === comm)
      .map((e) => (e as { directory?: string }).directory),
  );

describe.skipIf(missing)('series hygiene', () => {
  it('leaves a process another agent reports to that agent: one copy, under its service', async () => {
    const svcDir = path.join(work, 'svc');
    const freeDir = path.join(work, 'free');
    await runHelper('fsync_dirs.py', ['onset-svc', '10', svcDir]);
    await runHelper('fsync_dirs.py', ['onset-free', '10', freeDir]);

    // The host-wide agent reports the unclaimed workload...
    await host.waitFor('the unclaimed workload', (es) => fsyncDirs(es, 'onset-free').has(freeDir));
    await host.waitFor(
      'its spawns',
      (es) => es.filter((e) => e.kind === 'spawn' && e.parentComm === 'onset-free').length >= 10,
    );
    // ...and the other agent the claimed one, under its own service.
    const svcSpawns = await waitForSeries(
      server.url,
      { service: 'scope-svc', op: 'spawn' },
      (s) => s.name === 'true',
      10,
      30_000,
    );
    expect(svcSpawns.count).toBeGreaterThanOrEqual(10);
    // Both ran before the checks above passed; the claimed one's events would be here by now.
    await new Promise((r) => setTimeout(r, 1_000));
    const copies = host.events.filter(
      (e) =>
        (e.kind === 'spawn' && e.parentComm === 'onset-svc') ||
        (e.kind === 'fsync' && e.comm === 'onset-svc'),
    );
    expect(copies).toEqual([]);
    await host.agent.flush();
    const hostSeries = await listSeries(server.url, { service: 'scope-host' });
    expect(hostSeries.some((s) => s.name === path.join(work, 'svc'))).toBe(false);
    // A host-wide agent reports a program under the program's name (host/programs.ts): the
    // claimed one is not there either, the unclaimed one is.
    expect(await listSeries(server.url, { service: 'onset-svc' })).toEqual([]);
    await waitForSeries(
      server.url,
      { service: 'onset-free', op: 'spawn' },
      (s) => s.name === 'true',
      10,
    );
    expect(host.logs.join('\n')).toMatch(/processes other Onset agents report are left to them/);
  });

  it('leaves browser profiles and package caches out by default; exclude adds, include brings back', async () => {
    const dirs = {
      data: path.join(work, 'data'),
      playwright: `/tmp/playwright_chromiumdev_profile-${path.basename(work).slice(-6)}Q1/Default`,
      npm: path.join(work, 'home/.npm/_cacache/index-v5/ab'),
      pip: path.join(work, 'home/.cache/pip/http/1'),
      pipKept: path.join(work, 'home/.cache/pip/keep'),
      excluded: path.join(work, 'excluded/x'),
    };
    try {
      await runHelper('fsync_dirs.py', ['onset-scope', '0', ...Object.values(dirs)]);
      await host.waitFor('fsyncs in the reported directories', (es) => {
        const seen = fsyncDirs(es, 'onset-scope');
        return seen.has(dirs.data) && seen.has(dirs.pipKept);
      });
      await new Promise((r) => setTimeout(r, 1_000));
      const seen = fsyncDirs(host.events, 'onset-scope');
      for (const d of [dirs.playwright, dirs.npm, dirs.pip, dirs.excluded])
        expect(seen.has(d), `${d} should be left out`).toBe(false);
      expect(host.logs.join('\n')).toMatch(
        /scope: leaving out browsers' temporary and test profiles and package managers' caches, 1 configured path pattern/,
      );
    } finally {
      rmSync(path.dirname(dirs.playwright), { recursive: true, force: true });
    }
  });

  it('drops spans of new series past the per-minute cap, and counts and logs them', async () => {
    const capped = await startTestAgent({
      flags: {
        endpoint: server.otlpUrl,
        serviceName: 'scope-cap',
        comm: ['onset-cap'],
        strace: false,
      },
      tune: (c) => (c.scope.maxNewSeriesPerMinute = 3),
    });
    try {
      const dirs = Array.from({ length: 8 }, (_, i) => path.join(work, 'cap', `d${i}`));
      await runHelper('fsync_dirs.py', ['onset-cap', '0', ...dirs]);
      // Each directory gets two fsyncs (file, directory): 8 fsync series, 16 spans.
      await capped.waitFor('the first series', (es) => es.some((e) => e.kind === 'fsync'));
      await new Promise((r) => setTimeout(r, 1_500));
      const admitted = fsyncDirs(capped.events, 'onset-cap');
      expect(admitted.size).toBe(3);
      expect(capped.events.filter((e) => e.kind === 'fsync').length).toBe(6);
    } finally {
      await capped.stop();
    }
    expect(capped.logs.join('\n')).toMatch(
      /series cap: dropped 10 spans of 5 new series in the last minute \(more than 3 new series a minute; e\.g\. fsync internal .*cap\/d\d/,
    );
  });
});
