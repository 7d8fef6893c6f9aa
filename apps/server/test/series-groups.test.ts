/**
 * The grouped reads on a real server holding three incidents (the kernel rollout
 * on two of four containerd nodes, the urlite hyper bump behind checkout, and
 * payments 2.4.0 on one of three hosts): `GET /series/{id}/groups` answers one
 * line per host or attribute value, each equal to the quantiles read filtered
 * to it; `GET /regressions/{id}/cohort` answers the slow and fast sides, each
 * the merge of its hosts' histograms (checked against the heatmap's raw
 * buckets per host, merged here); evidence takes its after-onset exemplars
 * from the slow cohort.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Histogram } from '@onset/core';
import type {
  Evidence,
  HeatmapResponse,
  QuantilesColumns,
  Regression,
  RegressionCohortLines,
  Series,
  SeriesGroups,
} from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  incidentTimes,
  LIVE_WINDOW,
  ROLLOUT,
  sendIncidents,
  sendVersionRollout,
} from '@onset/testkit/incidents';

let srv: TestServer;
let regressions: Regression[] = [];
let from = '';
let to = '';

async function get<T>(path: string, status = 200): Promise<T> {
  const res = await fetch(`${srv.url}/api/v1${path}`);
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBe(status);
  return JSON.parse(text) as T;
}

const seriesOf = async (service: string, op: string, view: string) =>
  (await get<{ series: Series[] }>(`/series?service=${service}&op=${op}&view=${view}`)).series;

const window = () => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&step=1m`;

const quantiles = (id: string, filter: string) =>
  get<QuantilesColumns>(`/series/${id}/quantiles?${window()}&layout=columns&${filter}`);

beforeAll(async () => {
  srv = await startTestServer();
  const t = incidentTimes(Date.now(), LIVE_WINDOW);
  await sendIncidents({ apiUrl: srv.url, otlpUrl: srv.otlpUrl, times: t });
  await sendVersionRollout({ apiUrl: srv.url, otlpUrl: srv.otlpUrl, times: t });
  const detect = await fetch(`${srv.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(detect.status, await detect.text()).toBe(200);
  regressions = (await get<{ regressions: Regression[] }>('/regressions?status=open')).regressions;
  from = new Date(t.fromMs).toISOString();
  to = new Date(t.endMs).toISOString();
}, 180_000);

afterAll(async () => {
  await srv?.close();
});

describe('GET /api/v1/series/{id}/groups', () => {
  it('by os.version: one group per kernel, each the quantiles read filtered to that value', async () => {
    const [s] = await seriesOf('containerd', 'unmount', 'internal');
    const g = await get<SeriesGroups>(`/series/${s!.id}/groups?by=os.version&${window()}`);
    expect(g.by).toBe('os.version');
    expect(g.step_ms).toBe(60_000);
    expect(g.groups.map((x) => x.value).sort()).toEqual(['4.15.0-36', '4.4.0-138']);
    expect(g.total_groups).toBe(2);
    const bumped = g.groups.find((x) => x.value === '4.15.0-36')!;
    expect(bumped.hosts).toEqual(['node-3', 'node-4']);
    expect(g.groups.find((x) => x.value === '4.4.0-138')!.hosts).toEqual([
      'node-1',
      'node-2',
      'node-3',
      'node-4',
    ]);
    for (const grp of g.groups) {
      const q = await quantiles(
        s!.id,
        `attribute=${encodeURIComponent(`os.version=${grp.value}`)}`,
      );
      expect(grp.columns).toEqual(q.columns);
      expect(grp.count).toBe(q.columns.count.reduce((a, b) => a + b, 0));
    }
    // Most calls first: the old kernel ran everywhere for two hours.
    expect(g.groups[0]!.value).toBe('4.4.0-138');
  });

  it('by host: one group per host, each the quantiles read of that host; limit cuts and says so', async () => {
    const [s] = await seriesOf('containerd', 'unmount', 'internal');
    const g = await get<SeriesGroups>(`/series/${s!.id}/groups?by=host&${window()}&q=0.5,0.9,0.99`);
    expect(g.groups.map((x) => x.value).sort()).toEqual(['node-1', 'node-2', 'node-3', 'node-4']);
    for (const grp of g.groups) {
      expect(grp.hosts).toEqual([grp.value]);
      const q = await quantiles(s!.id, `host=${grp.value}&q=0.5,0.9,0.99`);
      expect(grp.columns).toEqual(q.columns);
    }
    const cut = await get<SeriesGroups>(`/series/${s!.id}/groups?by=host&${window()}&limit=3`);
    expect(cut.groups).toHaveLength(3);
    expect(cut.total_groups).toBe(4);
  });

  it("with host: only that host's calls, grouped (the Explorer's host filter)", async () => {
    const [s] = await seriesOf(ROLLOUT.service, 'request', 'server');
    const all = await get<SeriesGroups>(`/series/${s!.id}/groups?by=service.version&${window()}`);
    expect(all.host).toBeNull();
    expect(all.groups.map((x) => x.value).sort()).toEqual(['2.3.0', '2.4.0']);
    // The rolled host ran 2.3.0, then 2.4.0: both groups, its own calls only.
    const rolled = await get<SeriesGroups>(
      `/series/${s!.id}/groups?by=service.version&host=${ROLLOUT.rolled}&${window()}`,
    );
    expect(rolled.host).toBe(ROLLOUT.rolled);
    for (const g of rolled.groups) expect(g.hosts).toEqual([ROLLOUT.rolled]);
    const own = await quantiles(s!.id, `host=${ROLLOUT.rolled}`);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(rolled.groups.map((g) => g.count))).toBe(sum(own.columns.count));
    expect(sum(rolled.groups.map((g) => g.count))).toBeLessThan(
      sum(all.groups.map((g) => g.count)),
    );
    // Another host never ran 2.4.0: one group.
    const other = ROLLOUT.hosts.find((h) => h !== ROLLOUT.rolled)!;
    const o = await get<SeriesGroups>(
      `/series/${s!.id}/groups?by=service.version&host=${other}&${window()}`,
    );
    expect(o.groups.map((x) => x.value)).toEqual(['2.3.0']);
    expect(o.groups[0]!.columns).toEqual((await quantiles(s!.id, `host=${other}`)).columns);
    // A host that feeds nothing of it: no groups.
    const none = await get<SeriesGroups>(
      `/series/${s!.id}/groups?by=service.version&host=nowhere&${window()}`,
    );
    expect(none.groups).toEqual([]);
  });

  it('by service.version on the callee and on payments; an attribute nobody reports is one null group, the whole series', async () => {
    const [urlite] = await seriesOf('urlite', 'request', 'server');
    const u = await get<SeriesGroups>(
      `/series/${urlite!.id}/groups?by=service.version&${window()}`,
    );
    expect(u.groups.map((x) => x.value).sort()).toEqual(['1.4.0', '1.5.0']);
    const [pay] = await seriesOf(ROLLOUT.service, 'request', 'server');
    const p = await get<SeriesGroups>(`/series/${pay!.id}/groups?by=service.version&${window()}`);
    const v24 = p.groups.find((x) => x.value === '2.4.0')!;
    expect(v24.hosts).toEqual(['pay-3']);
    const q = await quantiles(pay!.id, `attribute=${encodeURIComponent('service.version=2.4.0')}`);
    expect(v24.columns).toEqual(q.columns);
    // 2.4.0 is ×10 slower than 2.3.0 at every step it has.
    const v23 = p.groups.find((x) => x.value === '2.3.0')!;
    const at = v24.columns.t[5]!;
    const i23 = v23.columns.t.indexOf(at);
    expect(v24.columns.q['0.5']![5]! / v23.columns.q['0.5']![i23]!).toBeGreaterThan(8);

    const none = await get<SeriesGroups>(
      `/series/${pay!.id}/groups?by=dependency.nothing&${window()}`,
    );
    expect(none.groups).toHaveLength(1);
    expect(none.groups[0]!.value).toBeNull();
    expect(none.groups[0]!.hosts).toEqual([...ROLLOUT.hosts]);
    const whole = await quantiles(pay!.id, '');
    expect(none.groups[0]!.columns).toEqual(whole.columns);
  });

  it('refuses what it cannot answer', async () => {
    const [s] = await seriesOf('containerd', 'unmount', 'internal');
    await get(`/series/999999/groups?by=host`, 404);
    await get(`/series/${s!.id}/groups`, 400); // by is required
    await get(
      `/series/${s!.id}/groups?by=host&from=${encodeURIComponent(to)}&to=${encodeURIComponent(from)}`,
      400,
    );
    await get(`/series/${s!.id}/groups?by=host&from=now-30d&step=1m`, 400); // > 5,000 steps
    await get(`/series/${s!.id}/groups?by=host&q=0.1,0.2,0.3,0.4,0.5`, 400);
  });
});

/** The heatmap's raw buckets of each host, merged per step, as the quantiles of `q` (ms). */
async function mergedByHand(seriesId: string, hosts: readonly string[], q: number) {
  const steps = new Map<number, Histogram>();
  for (const host of hosts) {
    const hm = await get<HeatmapResponse>(`/series/${seriesId}/heatmap?${window()}&host=${host}`);
    for (const p of hm.points) {
      const t = Date.parse(p.t);
      let h = steps.get(t);
      if (!h) steps.set(t, (h = new Histogram()));
      h.addSparse({ idx: p.idx, cnt: p.cnt });
    }
  }
  return [...steps.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([t, h]) => ({ t, count: h.count, v: Number((h.quantile(q) / 1000).toPrecision(6)) }));
}

describe('GET /api/v1/regressions/{id}/cohort', () => {
  it.each([
    ['the kernel rollout', 'unmount', 'os.version', ['node-3', 'node-4']],
    ['payments 2.4.0', 'request', 'service.version', ['pay-3']],
  ] as const)(
    '%s: slow and fast sides, each its hosts merged',
    async (_name, op, attribute, slowHosts) => {
      const r = regressions.find((x) => x.op === op && x.cohort?.attribute === attribute);
      expect(
        r,
        `a regression on ${op} with a ${attribute} cohort: ${JSON.stringify(regressions.map((x) => [x.op, x.name, x.cohort?.attribute]))}`,
      ).toBeTruthy();
      expect(r!.cohort!.slow_hosts).toEqual(slowHosts);
      const c = await get<RegressionCohortLines>(`/regressions/${r!.id}/cohort?${window()}`);
      expect(c.attribute).toBe(attribute);
      expect(c.series_id).toBe(r!.series_id);
      expect(c.sides.map((x) => x.side)).toEqual(['slow', 'fast']);
      const [slow, fast] = c.sides as [
        RegressionCohortLines['sides'][0],
        RegressionCohortLines['sides'][0],
      ];
      expect(slow.hosts).toEqual(r!.cohort!.slow_hosts);
      expect(fast.hosts).toEqual(r!.cohort!.fast_hosts);
      expect(slow.values).toEqual(r!.cohort!.slow);
      expect(slow.levels).toEqual(r!.cohort!.levels!.slow);
      expect(fast.levels).toEqual(r!.cohort!.levels!.fast);
      for (const side of [slow, fast]) {
        const byHand = await mergedByHand(r!.series_id, side.hosts, 0.5);
        expect(side.columns.t).toEqual(byHand.map((x) => x.t));
        expect(side.columns.count).toEqual(byHand.map((x) => x.count));
        expect(side.columns.q['0.5']).toEqual(byHand.map((x) => x.v));
      }
      // The slow side after the onset sits near its level; the fast side stays near its own.
      const onset = Date.parse(r!.onset);
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const after = (s: typeof slow) =>
        median(
          s.columns.t.flatMap((t, i) => (t > onset + 5 * 60_000 ? [s.columns.q['0.5']![i]!] : [])),
        );
      expect(after(slow) / slow.levels!.after.p50_ms).toBeGreaterThan(0.7);
      expect(after(slow) / slow.levels!.after.p50_ms).toBeLessThan(1.4);
      expect(after(fast) / fast.levels!.after.p50_ms).toBeGreaterThan(0.7);
      expect(after(fast) / fast.levels!.after.p50_ms).toBeLessThan(1.4);
      expect(after(slow)).toBeGreaterThan(5 * after(fast));
    },
  );

  it('a regression without a cohort answers no sides; an unknown one is a 404', async () => {
    // The hyper bump reached every urlite host at once: nothing to split.
    const edge = regressions.find((x) => x.name === 'GET /lookup' && !x.cohort);
    expect(edge, 'the edge regression, without a cohort').toBeTruthy();
    const c = await get<RegressionCohortLines>(`/regressions/${edge!.id}/cohort?${window()}`);
    expect(c.attribute).toBeNull();
    expect(c.sides).toEqual([]);
    await get('/regressions/999999/cohort', 404);
  });

  it("evidence: the typical calls after the onset are the slow cohort's, the fast hosts' apart", async () => {
    const r = regressions.find(
      (x) => x.op === 'request' && x.cohort?.attribute === 'service.version',
    )!;
    const e = await get<Evidence>(`/regressions/${r.id}/evidence`);
    expect(e.exemplars.after.length).toBeGreaterThan(0);
    for (const s of e.exemplars.after) expect(r.cohort!.slow_hosts).toContain(s.host);
    for (const s of e.exemplars.before) expect(r.cohort!.slow_hosts).toContain(s.host);
    const typical = e.exemplars.after.filter((s) => s.role === 'typical');
    for (const s of typical) expect(s.duration_ms).toBeGreaterThan(290);
    expect(e.exemplars.cohort?.attribute).toBe('service.version');
    expect(e.exemplars.cohort!.fast_after.length).toBeGreaterThan(0);
    for (const s of e.exemplars.cohort!.fast_after) {
      expect(r.cohort!.fast_hosts).toContain(s.host);
      expect(s.duration_ms).toBeLessThan(40);
    }
  });
});
