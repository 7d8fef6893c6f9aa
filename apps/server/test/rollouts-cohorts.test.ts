/**
 * Rollouts and cohorts in a shared database (issue 14 items 2 and 3), as OTLP
 * traffic from the official SDK into a real server on embedded PostgreSQL:
 *
 *   - inventory (8 hosts) and billing (6 hosts) move to the same kernel 25
 *     minutes apart (one inventory host an hour late, the others within
 *     minutes); the moved hosts slow down. Markers are only inferred from
 *     telemetry, so both rollouts land in inferred kernel markers.
 *   - cron shares a host with each of them and gets a config change at
 *     inventory's onset: sharing a host is no evidence.
 *   - search rolls a release to a canary host first, then to the rest 50
 *     minutes later, posted per host.
 *
 * The generator is this file's own: its hosts, times and slowdowns are not
 * the incident fixtures'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const T_INVENTORY = END - 75 * MIN;
const T_BILLING = T_INVENTORY + 25 * MIN;
const T_SEARCH = T_INVENTORY + 10 * MIN;
const FROM = T_INVENTORY - 240 * MIN;
const OLD_KERNEL = '6.5.0-44';
const NEW_KERNEL = '6.8.0-31';

const range = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(2, '0')}`);
const INVENTORY = range('inv', 8);
const BILLING = range('bil', 6);
const SEARCH = range('srch', 5);

/** When each host boots the new kernel (absent: never). */
const kernelAt = new Map<string, number>([
  ['inv-02', T_INVENTORY],
  ['inv-03', T_INVENTORY + 40_000],
  ['inv-05', T_INVENTORY + 95_000],
  ['inv-07', T_INVENTORY + 150_000],
  // An hour after the others: half of its after window is on the old kernel.
  ['inv-08', T_INVENTORY + 55 * MIN],
  ['bil-01', T_BILLING + 20_000],
  ['bil-03', T_BILLING + 70_000],
  ['bil-04', T_BILLING + 110_000],
  ['bil-06', T_BILLING + 200_000],
]);
const MOVED_INVENTORY = INVENTORY.filter((h) => kernelAt.has(h));
const MOVED_BILLING = BILLING.filter((h) => kernelAt.has(h));
/** search's release reaches the canary first, then the rest. */
const releaseAt = new Map<string, number>(
  SEARCH.map((h, i) => [h, i === 0 ? T_SEARCH - 50 * MIN : T_SEARCH - 2 * MIN + i * 15_000]),
);

let server: TestServer;
let all: Regression[] = [];
let cronConfig = '';
let searchMarkers: string[] = [];

async function post(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${server.url}/api/v1/deploys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  server = await startTestServer();
  const tr = new Traffic(20261124);
  const kernel = (host: string, t: number) =>
    (kernelAt.get(host) ?? Infinity) <= t ? NEW_KERNEL : OLD_KERNEL;
  for (let m = FROM; m < END; m += MIN) {
    const at = (i: number, n: number) => m + ((i + tr.rand()) * MIN) / n;
    for (const [service, hosts, route, typical, slowdown] of [
      ['inventory', INVENTORY, '/items', 18, 5],
      ['billing', BILLING, '/charge', 40, 4],
    ] as const) {
      hosts.forEach((host, k) => {
        for (let i = 0; i < 10; i++) {
          const t = at(i, 10);
          const os = kernel(host, t);
          const ms = tr.lognormal(typical * (1 + k / 20), 0.3) * (os === NEW_KERNEL ? slowdown : 1);
          tr.span(
            { 'service.name': service, 'host.name': host, 'os.version': os },
            'handle',
            SpanKind.SERVER,
            t,
            ms,
            { 'http.request.method': 'POST', 'http.route': route },
          );
        }
      });
    }
    // cron lives on one inventory and one billing host and never changes speed.
    for (const host of ['inv-01', 'bil-02']) {
      for (let i = 0; i < 2; i++) {
        const t = at(i, 2);
        tr.span(
          { 'service.name': 'cron', 'host.name': host, 'os.version': kernel(host, t) },
          'spawn',
          SpanKind.INTERNAL,
          t,
          tr.lognormal(3, 0.3),
          { 'process.executable.name': 'backup.sh' },
        );
      }
    }
    for (const host of SEARCH) {
      for (let i = 0; i < 10; i++) {
        const t = at(i, 10);
        const released = releaseAt.get(host)! <= t;
        tr.span(
          {
            'service.name': 'search',
            'host.name': host,
            'os.version': OLD_KERNEL,
            'service.version': released ? '2.1.0' : '2.0.0',
          },
          'query',
          SpanKind.SERVER,
          t,
          tr.lognormal(25, 0.25) * (released ? 3 : 1),
          { 'http.request.method': 'GET', 'http.route': '/q' },
        );
      }
    }
  }
  await tr.send(server.otlpUrl);

  cronConfig = await post({
    service: 'cron',
    hosts: ['inv-01'],
    kind: 'config',
    component: 'schedule',
    description: 'run backups hourly',
    at: new Date(T_INVENTORY).toISOString(),
  });
  searchMarkers = [];
  for (const host of SEARCH)
    searchMarkers.push(
      await post({
        service: 'search',
        hosts: [host],
        kind: 'code',
        from_version: '2.0.0',
        to_version: '2.1.0',
        at: new Date(releaseAt.get(host)!).toISOString(),
      }),
    );

  const res = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ upto: new Date(END).toISOString() }),
  });
  expect(res.status).toBe(200);
  all = (
    (await (await fetch(`${server.url}/api/v1/regressions?limit=100`)).json()) as {
      regressions: Regression[];
    }
  ).regressions;
}, 240_000);

afterAll(async () => {
  await server?.close();
});

const only = (service: string) => {
  const found = all.filter((r) => r.service === service);
  expect(found.map((r) => `${r.service} ${r.view} ${r.name} ${r.onset}`)).toHaveLength(1);
  return found[0]!;
};

const sorted = (xs: readonly string[]) => [...xs].sort();

function kernelRollout(r: Regression, moved: string[], changeMs: number) {
  const top = r.suspects[0]!;
  expect(top).toMatchObject({ kind: 'kernel', to_version: NEW_KERNEL, source: 'inferred' });
  // Its own hosts first, then the rest of the rollout; how many regressed hosts it covers.
  expect(sorted(top.hosts.slice(0, moved.length))).toEqual(moved);
  expect(top.coverage).toEqual({ covered: moved.length, regressed: moved.length });
  expect(top.reason).toContain(`covering ${moved.length} of ${moved.length} regressed hosts`);
  // Its own time, not the other service's.
  expect(Math.abs(Date.parse(top.at) - changeMs)).toBeLessThanOrEqual(5 * MIN);
  // Every kernel marker of the rollout is one suspect.
  expect(r.suspects.filter((s) => s.kind === 'kernel')).toHaveLength(1);
}

function confinedCohort(r: Regression, moved: string[], stayed: string[]) {
  expect(r.cohort).toMatchObject({
    attribute: 'os.version',
    slow: [NEW_KERNEL],
    fast: [OLD_KERNEL],
    changed: true,
  });
  expect(r.cohort!.slow_hosts).toEqual(moved);
  expect(r.cohort!.fast_hosts).toEqual(stayed);
  expect(r.cohort!.slow_hosts.filter((h) => r.cohort!.fast_hosts.includes(h))).toEqual([]);
  // Headline levels are the slow cohort's; the whole series is beside them.
  const lv = r.cohort!.levels!;
  expect([r.before.p50_ms, r.before.p99_ms]).toEqual([
    lv.slow.before.p50_ms,
    lv.slow.before.p99_ms,
  ]);
  expect([r.after.p50_ms, r.after.p99_ms]).toEqual([lv.slow.after.p50_ms, lv.slow.after.p99_ms]);
  expect(r.ratio_p50).toBeGreaterThan(3);
  expect(lv.fast.after.p50_ms / lv.fast.before.p50_ms).toBeLessThan(1.25);
  expect(r.series_levels).not.toBeNull();
  expect(r.series_levels!.ratio_p50).toBeLessThan(r.ratio_p50);
}

describe('two services move to the same kernel in the same hour', () => {
  it('inventory: its own hosts and rollout, an os.version cohort with the late host on the slow side', () => {
    const inventory = all.filter((r) => r.service === 'inventory');
    const r = inventory.find((x) => Math.abs(Date.parse(x.onset) - T_INVENTORY) <= 4 * MIN)!;
    expect(r, inventory.map((x) => x.onset).join(', ')).toBeDefined();
    kernelRollout(r, MOVED_INVENTORY, T_INVENTORY);
    // The late host's own step (55 minutes later) may be a second regression: the same rollout, its own hosts.
    for (const x of inventory) {
      expect(sorted(x.suspects[0]!.hosts.slice(0, MOVED_INVENTORY.length))).toEqual(
        MOVED_INVENTORY,
      );
      expect(x.suspects[0]!.deploy_id).toBe(r.suspects[0]!.deploy_id);
    }
    confinedCohort(
      r,
      MOVED_INVENTORY,
      INVENTORY.filter((h) => !kernelAt.has(h)),
    );
  });

  it('billing: its own hosts and rollout, 25 minutes later', () => {
    const r = only('billing');
    expect(Math.abs(Date.parse(r.onset) - T_BILLING)).toBeLessThanOrEqual(4 * MIN);
    kernelRollout(r, MOVED_BILLING, T_BILLING);
    confinedCohort(
      r,
      MOVED_BILLING,
      BILLING.filter((h) => !kernelAt.has(h)),
    );
  });

  it('the inferred kernel marker keeps who changed where and when', async () => {
    const res = await fetch(`${server.url}/api/v1/deploys?source=inferred&kind=kernel`);
    const deploys = (
      (await res.json()) as {
        deploys: Array<{
          id: string;
          changes?: Array<{ service: string; host: string; at: string }>;
        }>;
      }
    ).deploys;
    const changes = deploys.flatMap((d) => d.changes ?? []);
    for (const [service, moved] of [
      ['inventory', MOVED_INVENTORY],
      ['billing', MOVED_BILLING],
    ] as const)
      for (const host of moved) {
        const c = changes.find((x) => x.service === service && x.host === host);
        expect(c, `${service} on ${host}`).toBeDefined();
        expect(Math.abs(Date.parse(c!.at) - kernelAt.get(host)!)).toBeLessThan(MIN);
      }
  });

  it('a config change of a service that only shares a host is nobody’s suspect, and cron did not regress', () => {
    for (const r of all) expect(r.suspects.map((s) => s.deploy_id)).not.toContain(cronConfig);
    expect(all.filter((r) => r.service === 'cron')).toEqual([]);
  });
});

describe('a canary rollout', () => {
  it('the canary and the rest, posted per host, are one suspect at the top of every search regression', () => {
    const search = all.filter((r) => r.service === 'search');
    expect(search.length).toBeGreaterThanOrEqual(1);
    for (const r of search) {
      const top = r.suspects[0]!;
      expect(top).toMatchObject({ kind: 'code', service: 'search', to_version: '2.1.0' });
      expect(searchMarkers.every((id) => top.deploy_ids!.includes(id))).toBe(true);
      expect(r.suspects.filter((s) => s.service === 'search' && s.kind === 'code')).toHaveLength(1);
      expect(sorted(top.hosts)).toEqual(SEARCH);
    }
    // The step of the whole fleet is timed by the second wave.
    const main = search.find((r) => Math.abs(Date.parse(r.onset) - T_SEARCH) <= 5 * MIN);
    expect(main, search.map((r) => r.onset).join(', ')).toBeDefined();
    expect(Math.abs(Date.parse(main!.suspects[0]!.at) - T_SEARCH)).toBeLessThanOrEqual(3 * MIN);
  });
});
