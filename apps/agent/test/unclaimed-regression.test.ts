/**
 * Issue 34 item 5 through the real agent pipeline into a real Onset server: a
 * host-wide agent (no --pid, --comm or --cgroup) reports two programs that have
 * no agent of its own. `scratchd`'s unmounts step ×4 an hour ago, when a deploy
 * marker for `scratchd` on this host was posted; `cachefsd`'s step ×4 half an hour
 * ago, when a marker for this host (no service: a storage move) was posted. The
 * events go into the agent's `record` sink as bpftrace delivers them (the shape
 * of its unmount events, pid and comm included); the agent names each program's
 * spans, exports them over OTLP, and detection runs on the server. Each
 * regression must be on its program's series (not the agent's own name) with its
 * marker as the top suspect. Times are in the past, so the run takes seconds.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression } from '@onset/contract';
import { mulberry32 } from '@onset/testkit/random';
import type { UnmountEvent } from '../src/events.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';

const AGENT = 'onset-agent-host';
const HOST = os.hostname();
const MIN = 60_000;
const PER_MIN = 8;
const endMs = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const fromMs = endMs - 180 * MIN;

interface Program {
  comm: string;
  mountPoint: string;
  onsetMs: number;
  /** The marker posted at the change (api.md "Deploys"), without `at`. */
  marker: Record<string, unknown>;
  markerId?: string;
}

const programs: Program[] = [
  {
    comm: 'scratchd',
    mountPoint: '/srv/scratchd/volume',
    onsetMs: endMs - 60 * MIN,
    marker: {
      service: 'scratchd',
      hosts: [HOST],
      kind: 'code',
      description: 'scratch volumes hold 128 MB',
    },
  },
  {
    comm: 'cachefsd',
    mountPoint: '/srv/cachefsd/cache',
    onsetMs: endMs - 30 * MIN,
    marker: { hosts: [HOST], kind: 'infra', description: 'scratch disks moved to network storage' },
  },
];

/** A pid no process has now: the agent finds no cgroup for it and names the program by its comm. */
function freePid(from: number): number {
  let pid = from;
  while (existsSync(`/proc/${pid}`)) pid++;
  return pid;
}

function lognormal(r: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-12, r());
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r()));
}

let server: TestServer;
let ta: TestAgent;

async function api(path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

beforeAll(async () => {
  server = await startTestServer();
  ta = await startTestAgent({
    // Host-wide: no filter. No tracer either: the events come from `record`.
    flags: { endpoint: server.otlpUrl, serviceName: AGENT, bpftrace: false, strace: false },
    tune: (c) => {
      c.export.flushIntervalMs = 200;
      c.host.cpu = false;
    },
  });
  const r = mulberry32(34);
  let pid = 40_000;
  let sent = 0;
  for (const p of programs) {
    const programPid = (pid = freePid(pid + 1));
    for (let m = fromMs; m < endMs; m += MIN)
      for (let i = 0; i < PER_MIN; i++) {
        const t = m + ((i + 0.5 * r()) * MIN) / PER_MIN;
        const ms = lognormal(r, t >= p.onsetMs ? 24 : 6, 0.25);
        const e: UnmountEvent = {
          kind: 'unmount',
          source: 'bpftrace',
          startNs: BigInt(Math.round(t * 1e6)),
          durationNs: Math.round(ms * 1e6),
          measuredUntil: 'return-to-user',
          syscallNs: Math.round(ms * 2e5),
          mountPoint: p.mountPoint,
          fsType: 'tmpfs',
          pid: programPid,
          comm: p.comm,
        };
        ta.agent.record(e);
        sent++;
      }
  }
  await ta.waitFor('every unmount', (es) => es.filter((e) => e.kind === 'unmount').length >= sent);
  await ta.agent.flush();
  expect(ta.agent.stats).toMatchObject({ queued: 0, dropped: 0, failedExports: 0 });
  for (const p of programs) {
    const stored = (await api('/api/v1/deploys', {
      ...p.marker,
      at: new Date(p.onsetMs).toISOString(),
    })) as { id: string };
    p.markerId = stored.id;
  }
  await api('/api/v1/detect', { upto: new Date(endMs).toISOString() });
}, 240_000);

afterAll(async () => {
  await ta?.stop();
  await server?.close();
});

async function regressions(): Promise<Regression[]> {
  return ((await api('/api/v1/regressions')) as { regressions: Regression[] }).regressions;
}

const label = (r: Regression) => `${r.service} ${r.op}/${r.view} ${r.name}`;

describe('a host-wide agent’s programs with no agent of their own', () => {
  it('opens one regression per program, on the program’s unmount series, none under the agent’s name', async () => {
    const all = await regressions();
    expect(all.map(label).sort()).toEqual(
      programs.map((p) => `${p.comm} unmount/internal ${p.mountPoint}`).sort(),
    );
    for (const r of all) expect(r.service).not.toBe(AGENT);
  });

  it('names the program’s own marker (service = the program, on this host) as the top suspect', async () => {
    const p = programs[0]!;
    const r = (await regressions()).find((x) => x.service === p.comm)!;
    expect(r.suspects[0]?.deploy_id, JSON.stringify(r.suspects)).toBe(p.markerId);
    expect(Math.abs(Date.parse(r.onset) - p.onsetMs)).toBeLessThanOrEqual(2 * MIN);
  });

  it('names the host’s marker (no service, this host in its scope) as the top suspect of the series this host feeds', async () => {
    const p = programs[1]!;
    const r = (await regressions()).find((x) => x.service === p.comm)!;
    expect(r.suspects[0]?.deploy_id, JSON.stringify(r.suspects)).toBe(p.markerId);
    expect(r.suspects[0]?.reason).toContain(`on ${HOST}, which feed this series`);
    // The other program's marker is not this one's suspect: another service, no evidence.
    expect(r.suspects.map((s) => s.deploy_id)).not.toContain(programs[0]!.markerId);
  });
});
