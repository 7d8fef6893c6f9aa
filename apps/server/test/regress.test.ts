/**
 * The five incidents of product.md, replayed as OTLP traffic from the
 * official SDK through a real server on embedded PostgreSQL: after
 * POST /api/v1/detect each one is a single regression on the right series
 * with the right top suspect (and cohort), and a replay where nothing changes
 * yields nothing. Then more data arrives, on a second server process that
 * starts from the first one's checkpoints: nothing is duplicated, counts grow,
 * and the rolled-back incident resolves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  incidentTimes,
  replayIncidents,
  type MarkerIds,
  REPLAY_MEMBERS,
  REPLAY_REGRESSIONS,
} from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';

const MIN = 60_000;
const times = incidentTimes();
let a: TestServer;
let b: TestServer | undefined;
let markers: MarkerIds;
let all: Regression[] = [];

async function detect(server: TestServer, body: object = {}) {
  const res = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    detection: {
      through: string;
      regressions: { opened: number; resolved: number };
      series: { new: number; fed: number };
    };
    pairing: { pairs: number };
  };
}

async function regressions(server: TestServer, query = ''): Promise<Regression[]> {
  const res = await fetch(`${server.url}/api/v1/regressions${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { regressions: Regression[] }).regressions;
}

const one = (service: string, view?: string) => {
  const found = all.filter((r) => r.service === service && (view === undefined || r.view === view));
  expect(found.map((r) => `${r.service} ${r.op} ${r.view} ${r.name}`)).toHaveLength(1);
  return found[0]!;
};

const nearOnset = (r: Regression) =>
  expect(Math.abs(Date.parse(r.onset) - times.onsetMs)).toBeLessThanOrEqual(3 * MIN);

beforeAll(async () => {
  a = await startTestServer();
  const sent = await replayIncidents({ otlpUrl: a.otlpUrl, apiUrl: a.url, times, phase: 1 });
  markers = sent.markers!;
  const r = await detect(a, { upto: new Date(times.endMs).toISOString() });
  expect(r.detection.through).toBe(new Date(times.endMs).toISOString());
  expect(r.pairing.pairs).toBeGreaterThan(0);
  all = await regressions(a);
}, 120_000);

afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('incident replays through POST /api/v1/detect', () => {
  it('1. spawn after an idle-shutdown release: postgres spawns go from ~180 ms to seconds, the release is the top suspect', () => {
    const r = one('pageserver');
    expect(r).toMatchObject({
      op: 'spawn',
      view: 'internal',
      name: 'postgres',
      peer: null,
      host: null,
      status: 'open',
    });
    nearOnset(r);
    expect(r.before.p50_ms).toBeGreaterThan(140);
    expect(r.before.p50_ms).toBeLessThan(230);
    expect(r.after.p50_ms).toBeGreaterThan(1000);
    expect(r.after.p99_ms).toBeGreaterThan(3000);
    expect(r.ratio_p50).toBeGreaterThan(5);
    expect(r.suspects[0]).toMatchObject({
      deploy_id: markers.pageserverRelease,
      kind: 'code',
      service: 'pageserver',
    });
    expect(r.suspects[0]!.reason).toMatch(/0\.9\.13 → 0\.9\.14.*pageserver/);
    // The page-cache change an hour earlier is in scope but far from the onset; other services' markers are not suspects.
    const old = r.suspects.find((s) => s.deploy_id === markers.pageserverOldConfig);
    if (old) expect(old.score).toBeLessThan(r.suspects[0]!.score / 5);
    expect(r.suspects.every((s) => s.service === 'pageserver' || s.service === null)).toBe(true);
  });

  it('2. spawn-method cohort: only the hosts moved to fork() slowed down, and the config change that moved them is the suspect', () => {
    const r = one('builder');
    expect(r).toMatchObject({ op: 'spawn', view: 'internal', name: 'cc' });
    nearOnset(r);
    expect(r.cohort).toMatchObject({
      attribute: 'onset.cohort.spawn_method',
      slow: ['fork'],
      fast: ['posix_spawn'],
    });
    expect(r.after.p99_ms).toBeGreaterThan(5);
    expect(r.before.p99_ms).toBeLessThan(0.2);
    expect(r.suspects[0]).toMatchObject({ deploy_id: markers.builderSpawnConfig, kind: 'config' });
    // The service-wide release 25 minutes earlier ranks lower.
    const release = r.suspects.find((s) => s.deploy_id === markers.builderRelease);
    if (release) expect(release.score).toBeLessThan(r.suspects[0]!.score);
  });

  it('3. fsync per deleted file: the WAL cleanup goes from 0.81 s to 2.45 s after the release', () => {
    const r = one('postgres');
    expect(r).toMatchObject({
      op: 'fsync',
      view: 'internal',
      name: '/var/lib/postgresql/16/main/pg_wal',
    });
    nearOnset(r);
    expect(r.before.p50_ms).toBeGreaterThan(810 * 0.93);
    expect(r.before.p50_ms).toBeLessThan(810 * 1.07);
    expect(r.after.p50_ms).toBeGreaterThan(2450 * 0.93);
    expect(r.after.p50_ms).toBeLessThan(2450 * 1.07);
    expect(r.ratio_p50).toBeGreaterThan(2.7);
    expect(r.ratio_p50).toBeLessThan(3.4);
    expect(r.suspects[0]).toMatchObject({
      deploy_id: markers.postgresRelease,
      kind: 'code',
      service: 'postgres',
    });
  });

  it('4. a flat +40 ms only the caller sees: ONE regression, headed by the gap view, with the client view as a member; no server view regressed; the callee’s hyper bump is the suspect', () => {
    const r = one('checkout');
    expect(r).toMatchObject({
      op: 'request',
      view: 'gap',
      name: 'GET /lookup',
      peer: 'urlite',
      host: null,
    });
    nearOnset(r);
    expect(r.after.p50_ms - r.before.p50_ms).toBeGreaterThan(35);
    expect(r.after.p50_ms - r.before.p50_ms).toBeLessThan(45);
    expect(r.suspects[0]).toMatchObject({
      deploy_id: markers.urliteHyper,
      kind: 'dependency',
      service: 'urlite',
      component: 'hyper',
    });
    expect(r.suspects[0]!.reason).toMatch(/hyper 0\.12\.35 → 0\.13\.1.*callee/);
    // The caller's own config change 20 minutes earlier is in scope but loses.
    const own = r.suspects.find((s) => s.deploy_id === markers.checkoutConfig);
    if (own) expect(own.score).toBeLessThan(r.suspects[0]!.score);

    // Each view's own evidence: the gap headline carries the regression's numbers, the client view its own.
    expect(r.members.map((m) => [m.view, m.headline])).toEqual([
      ['gap', true],
      ['client', false],
    ]);
    const [gap, client] = r.members as [Regression['members'][0], Regression['members'][0]];
    expect(gap).toMatchObject({
      series_id: r.series_id,
      onset: r.onset,
      before: r.before,
      after: r.after,
      ratio_p50: r.ratio_p50,
      confidence: r.confidence,
    });
    expect(client).toMatchObject({ service: 'checkout', name: 'GET /lookup', peer: 'urlite' });
    expect(client.series_id).not.toBe(gap.series_id);
    expect(Math.abs(Date.parse(client.onset) - times.onsetMs)).toBeLessThanOrEqual(3 * MIN);
    expect(client.after.p50_ms - client.before.p50_ms).toBeGreaterThan(35);
    expect(client.after.p50_ms - client.before.p50_ms).toBeLessThan(45);
    expect(client.confidence).toBeGreaterThan(0.9);
    // The gap shows it best: near zero before, ~40 ms after.
    expect(Math.max(gap.ratio_p50, gap.ratio_p99)).toBeGreaterThan(
      Math.max(client.ratio_p50, client.ratio_p99),
    );
    for (const m of r.members) expect(m.hosts.length).toBeGreaterThan(0);
    expect(all.filter((x) => x.view === 'server')).toEqual([]);
    expect(all.filter((x) => x.service === 'urlite')).toEqual([]);
  });

  it('5. slow unmounts after a kernel bump: the os.version cohort splits 4.15 from 4.4 and the kernel rollout is the suspect', () => {
    const r = one('containerd');
    expect(r).toMatchObject({
      op: 'unmount',
      view: 'internal',
      name: '/run/containerd/overlay/rootfs',
      host: null,
    });
    nearOnset(r);
    expect(r.cohort).toMatchObject({
      attribute: 'os.version',
      slow: ['4.15.0-36'],
      fast: ['4.4.0-138'],
    });
    expect(r.after.p99_ms).toBeGreaterThan(7000);
    expect(r.suspects[0]).toMatchObject({ deploy_id: markers.kernelRollout, kind: 'kernel' });
    // The NIC swap touched only a fast host; the service-wide config change is older and not confined.
    for (const id of [markers.nicSwap, markers.containerdConfig]) {
      const s = r.suspects.find((x) => x.deploy_id === id);
      if (s) expect(s.score).toBeLessThan(r.suspects[0]!.score / 2);
    }
  });

  it('nothing else regressed: the no-change replay (ledger) and every background series yield nothing', () => {
    expect(all.filter((r) => r.service === 'ledger')).toEqual([]);
    expect(all.map((r) => `${r.service}/${r.view}`).sort()).toEqual([...REPLAY_REGRESSIONS]);
    expect(all.flatMap((r) => r.members.map((m) => `${m.service}/${m.view}`)).sort()).toEqual([
      ...REPLAY_MEMBERS,
    ]);
  });

  it('each new regression raised a firing alert naming it', async () => {
    const res = await fetch(`${a.url}/api/v1/alerts?type=regression&status=firing`);
    const alerts = (
      (await res.json()) as { alerts: Array<{ regression_id: string; title: string }> }
    ).alerts;
    expect(alerts.map((x) => x.regression_id).sort()).toEqual(all.map((r) => r.id).sort());
  });

  it('filters: service, op, view, status, since; one regression by id; bad input is a 400/404', async () => {
    expect((await regressions(a, '?service=checkout&view=gap')).map((r) => r.id)).toEqual([
      one('checkout', 'gap').id,
    ]);
    expect(await regressions(a, '?service=checkout&view=client')).toEqual([]);
    // series_id finds the regression from any of its members' series.
    for (const m of one('checkout').members)
      expect((await regressions(a, `?series_id=${m.series_id}`)).map((r) => r.id)).toEqual([
        one('checkout').id,
      ]);
    expect((await regressions(a, '?op=unmount')).map((r) => r.service)).toEqual(['containerd']);
    expect(
      await regressions(
        a,
        `?since=${encodeURIComponent(new Date(times.onsetMs + 10 * MIN).toISOString())}`,
      ),
    ).toEqual([]);
    expect((await regressions(a, '?status=open')).length).toBe(all.length);
    const r = one('postgres');
    const res = await fetch(`${a.url}/api/v1/regressions/${r.id}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Regression).name).toBe(r.name);
    expect((await fetch(`${a.url}/api/v1/regressions/999999`)).status).toBe(404);
    expect((await fetch(`${a.url}/api/v1/regressions/abc`)).status).toBe(404);
    const bad = await fetch(`${a.url}/api/v1/regressions?status=broken`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('bad_request');
  });

  it('Grafana sees each regression as an annotation naming its suspect', async () => {
    const { rows } = await a.onset.pool.query<{ id: string; text: string; tags: string }>(
      `SELECT id::text, text, tags FROM grafana_regression_annotations ORDER BY id`,
    );
    expect(rows.map((r) => r.id).sort()).toEqual(all.map((r) => r.id).sort());
    const gap = rows.find((r) => r.id === one('checkout', 'gap').id)!;
    expect(gap.text).toMatch(
      /checkout request "GET \/lookup" → urlite \(gap\).*suspect: Dependency bump hyper/,
    );
    expect(gap.tags).toBe('regression,checkout,request,gap');
    const kernel = rows.find((r) => r.id === one('containerd').id)!;
    expect(kernel.text).toMatch(/only os\.version = \["4\.15\.0-36"\]/);
  });

  it('a second pass finds the same regressions and adds none', async () => {
    const r = await detect(a, { upto: new Date(times.endMs).toISOString() });
    expect(r.detection.regressions.opened).toBe(0);
    expect((await regressions(a)).map((x) => x.id).sort()).toEqual(all.map((x) => x.id).sort());
  });
});

describe('as data arrives', () => {
  let later: Regression[] = [];
  beforeAll(async () => {
    await replayIncidents({ otlpUrl: a.otlpUrl, apiUrl: a.url, times, phase: 2 });
    // Another server process on the same database: no detector in memory, it continues from the checkpoints.
    b = await startTestServer({ databaseUrl: a.databaseUrl });
    const [x, y] = await Promise.all([detect(b), detect(a)]);
    expect(x.detection.regressions.opened + y.detection.regressions.opened).toBe(0);
    later = await regressions(b);
  }, 120_000);

  it('two servers passing at once add no duplicate, and every regression is updated with the new data', () => {
    expect(later.map((r) => r.id).sort()).toEqual(all.map((r) => r.id).sort());
    for (const r of later) {
      const before = all.find((x) => x.id === r.id)!;
      expect(r.after.count).toBeGreaterThan(before.after.count);
      expect(r.onset).toBe(before.onset);
      expect(r.members.map((m) => m.series_id)).toEqual(before.members.map((m) => m.series_id));
      r.members.forEach((m, i) =>
        expect(m.after.count).toBeGreaterThan(before.members[i]!.after.count),
      );
    }
  });

  it('the rolled-back incident resolves (and its alert with it); the others stay open', async () => {
    const pg = later.find((r) => r.service === 'postgres')!;
    expect(pg.status).toBe('resolved');
    expect(Date.parse(pg.resolved_at!)).toBeGreaterThan(times.endMs);
    expect(Date.parse(pg.resolved_at!)).toBeLessThanOrEqual(times.phase2EndMs + MIN);
    expect(
      later
        .filter((r) => r.status === 'open')
        .map((r) => r.service)
        .sort(),
    ).toEqual(['builder', 'checkout', 'containerd', 'pageserver']);
    expect(pg.members.map((m) => m.recovered_at !== null)).toEqual([true]);
    const res = await fetch(`${b!.url}/api/v1/alerts?regression_id=${pg.id}`);
    const alerts = ((await res.json()) as { alerts: Array<{ status: string }> }).alerts;
    expect(alerts.map((x) => x.status)).toEqual(['resolved']);
    expect((await regressions(b!, '?status=resolved')).map((r) => r.id)).toEqual([pg.id]);
  });

  it('ack, resolve and reopen from the UI change the status and the alert', async () => {
    const r = later.find((x) => x.service === 'containerd')!;
    const post = (action: string, body: object = {}) =>
      fetch(`${a.url}/api/v1/regressions/${r.id}/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    let res = await post('ack', { by: 'oncall@example.com' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'acknowledged',
      acknowledged_by: 'oncall@example.com',
    });
    expect((await regressions(a, '?status=open')).map((x) => x.id)).not.toContain(r.id);
    expect((await regressions(a, '?status=active')).map((x) => x.id)).toContain(r.id);
    const alert = async () =>
      (
        (await (await fetch(`${a.url}/api/v1/alerts?regression_id=${r.id}`)).json()) as {
          alerts: Array<{ status: string; acknowledged: unknown }>;
        }
      ).alerts[0]!;
    expect((await alert()).acknowledged).not.toBeNull();
    res = await post('resolve', { comment: 'rolled back the kernel' });
    expect(await res.json()).toMatchObject({
      status: 'resolved',
      resolution: 'rolled back the kernel',
    });
    expect((await alert()).status).toBe('resolved');
    expect((await post('ack')).status).toBe(409);
    res = await post('reopen');
    expect(await res.json()).toMatchObject({ status: 'open', resolved_at: null });
    expect(
      (
        await fetch(`${a.url}/api/v1/regressions/424242/ack`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(404);
  });
});
