/**
 * The synthetic probes, for real (as root here): spawn /bin/true with and
 * without many fds, the WAL-removal pattern, tmpfs and overlayfs unmounts,
 * and an HTTP target that answers with Server-Timing. One round, then the
 * series a user would look at must be in Onset.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { HINT_ATTRS } from '@onset/contract';
import type { FsyncEvent, RequestEvent, SpawnEvent, UnmountEvent } from '../src/events.ts';
import { eventToSpan } from '../src/telemetry/spans.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries, waitForSeries } from './helpers/onset.ts';

const SERVICE = 'agent-probes-test';
let server: TestServer;
let target: Server;
let targetUrl: string;
const seenHeaders: IncomingHttpHeaders[] = [];
let ta: TestAgent;
const probeDir = mkdtempSync('/var/tmp/onset-agent-probes-');

beforeAll(async () => {
  server = await startTestServer();
  // A target service that takes ~20 ms and says where the time went.
  target = createServer((req, res) => {
    seenHeaders.push(req.headers);
    setTimeout(() => {
      res.setHeader('Server-Timing', 'db;dur=12.5;desc="Primary, read", app;dur=3');
      res.end('ok');
    }, 20);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/lookup`;
  ta = await startTestAgent({
    flags: {
      endpoint: server.otlpUrl,
      serviceName: SERVICE,
      bpftrace: false,
      strace: false,
      probes: true,
      once: true,
      probeDir,
      walFiles: 20,
      spawnExtraFds: 3000,
      mountMb: 4,
      httpTarget: [targetUrl],
      dependency: ['glibc=2.36'],
    },
  });
});

afterAll(async () => {
  await ta?.stop();
  await server?.close();
  await new Promise((r) => target?.close(r));
  rmSync(probeDir, { recursive: true, force: true });
});

it('runs every probe once and the results show up in Onset as separate series', async () => {
  const log = ta.logs.join('\n');
  expect(log).toMatch(/probe spawn: spawn .*true ×3, also with 3000 extra fds open/);
  expect(log).toMatch(/probe wal: remove 20 files/);
  expect(log).toMatch(/probe mount: mount tmpfs and overlay/);
  expect(log).toMatch(new RegExp(`probe http: GET ${targetUrl}`));
  expect(ta.agent.sources).toEqual(['probes']);

  await ta.agent.probeRound();

  const spawns = ta.events.filter((e): e is SpawnEvent => e.kind === 'spawn');
  expect(spawns.filter((e) => !e.label)).toHaveLength(3);
  const fdSpawns = spawns.filter((e) => e.label === 'true (3000 extra fds)');
  expect(fdSpawns).toHaveLength(3);
  expect(fdSpawns[0]!.parentFdCount).toBeGreaterThanOrEqual(3000);

  const walBatches = ta.events.filter(
    (e): e is FsyncEvent => e.kind === 'fsync' && e.label !== undefined,
  );
  expect(walBatches.map((e) => e.label).sort()).toEqual([
    'wal-removal: fsync after each unlink (20 files)',
    'wal-removal: one fsync at the end (20 files)',
  ]);
  const dirSyncs = ta.events.filter((e) => e.kind === 'fsync' && !e.label);
  expect(dirSyncs).toHaveLength(21); // 20 after each unlink + 1 at the end
  // Each pass is an operation: its span says how many fsyncs it issued (onset.fsync.count).
  const fsyncsOf = (label: string) =>
    eventToSpan(walBatches.find((e) => e.label === label)!).attributes[HINT_ATTRS.fsyncCount];
  expect(fsyncsOf('wal-removal: fsync after each unlink (20 files)')).toBe(20);
  expect(fsyncsOf('wal-removal: one fsync at the end (20 files)')).toBe(1);

  const unmounts = ta.events.filter((e): e is UnmountEvent => e.kind === 'unmount');
  expect(unmounts.map((e) => e.fsType).sort()).toEqual(['overlay', 'tmpfs']);
  for (const u of unmounts) {
    expect(u.error).toBeUndefined();
    expect(u.writtenBytes).toBe(4 * 1024 * 1024);
    expect(u.dirtyBytes).toBeGreaterThanOrEqual(0);
  }
  // Nothing left mounted or written behind.
  expect(readdirSync(path.join(probeDir, 'mount-overlay', 'upper'))).toEqual([]);

  const req = ta.events.find((e): e is RequestEvent => e.kind === 'request')!;
  expect(req.statusCode).toBe(200);
  expect(req.durationNs).toBeGreaterThan(20e6);
  expect(req.serverTiming).toEqual([
    { name: 'db', durMs: 12.5, desc: 'Primary, read' },
    { name: 'app', durMs: 3 },
  ]);
  // The target got a W3C traceparent naming this client span, so its server span can pair with it.
  expect(seenHeaders[0]!.traceparent).toBe(`00-${req.traceId}-${req.spanId}-01`);

  await ta.agent.flush();
  const q = { service: SERVICE };
  await waitForSeries(server.url, { ...q, op: 'spawn' }, (s) => s.name === 'true', 3);
  await waitForSeries(
    server.url,
    { ...q, op: 'spawn' },
    (s) => s.name === 'true (3000 extra fds)',
    3,
  );
  const perUnlink = await waitForSeries(
    server.url,
    { ...q, op: 'fsync' },
    (s) => s.name.startsWith('wal-removal: fsync after each'),
    1,
  );
  const once = await waitForSeries(
    server.url,
    { ...q, op: 'fsync' },
    (s) => s.name.startsWith('wal-removal: one fsync'),
    1,
  );
  // The incident-3 lesson, measured on this disk: an fsync per unlink costs more than one at the end.
  expect(perUnlink.p50).toBeGreaterThan(once.p50);
  await waitForSeries(
    server.url,
    { ...q, op: 'fsync' },
    (s) => s.name === path.join(probeDir, 'wal'),
    21,
  );
  await waitForSeries(
    server.url,
    { ...q, op: 'unmount' },
    (s) => s.name === path.join(probeDir, 'mount-overlay', 'mnt'),
    1,
  );
  await waitForSeries(
    server.url,
    { ...q, op: 'unmount' },
    (s) => s.name === path.join(probeDir, 'mount-tmpfs', 'mnt'),
    1,
  );
  const request = await waitForSeries(
    server.url,
    { ...q, op: 'request', view: 'client' },
    (s) => s.name === 'GET /lookup',
    1,
  );
  expect(request.series.peer).toBe('127.0.0.1');
  expect(request.p50).toBeGreaterThan(20);

  const all = await listSeries(server.url, q);
  expect(new Set(all.map((s) => s.op))).toEqual(new Set(['spawn', 'fsync', 'unmount', 'request']));
  // The resource carries the cohort attributes: kernel release, architecture, dependency versions.
  const spawnSeries = all.find((s) => s.op === 'spawn' && s.name === 'true')!;
  for (const attribute of [
    `os.version=${os.release()}`,
    `host.arch=${process.arch === 'x64' ? 'amd64' : process.arch}`,
    'dependency.glibc=2.36',
  ]) {
    const res = await fetch(
      `${server.url}/api/v1/series/${spawnSeries.id}/quantiles?from=now-1h&step=1h&${new URLSearchParams({ attribute })}`,
    );
    const { points } = (await res.json()) as { points: { count: number }[] };
    expect(
      points.reduce((n, p) => n + p.count, 0),
      attribute,
    ).toBe(3);
  }
  expect(spawnSeries.hosts).toEqual([os.hostname()]);
});
