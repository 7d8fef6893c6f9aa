import { describe, expect, it } from 'vitest';
import {
  incidentSuspects,
  LOOKBACK_MS,
  markerWindow,
  rankSuspects,
  timeFit,
  type AttributionInput,
  type Cohort,
  type Marker,
} from '../src/index.ts';

const MIN = 60_000;
const ONSET = Date.UTC(2026, 10, 1, 12, 0);

function marker(over: Partial<Marker> & Pick<Marker, 'id' | 'kind' | 'atMs'>): Marker {
  return {
    source: 'api',
    service: null,
    hosts: [],
    component: null,
    from_version: null,
    to_version: null,
    commit: null,
    url: null,
    description: null,
    ...over,
  };
}

const input = (over: Partial<AttributionInput> = {}): AttributionInput => ({
  onsetMs: ONSET,
  uncertaintyMs: 0,
  service: 'checkout',
  view: 'server',
  peer: null,
  hosts: ['a', 'b'],
  cohort: null,
  ...over,
});

const release = marker({
  id: '1',
  kind: 'code',
  atMs: ONSET - 2 * MIN,
  service: 'checkout',
  hosts: ['a'],
  from_version: '1.2',
  to_version: '1.3',
});
const kernel = marker({
  id: '2',
  kind: 'kernel',
  atMs: ONSET - 30 * MIN,
  hosts: ['b'],
  from_version: '4.4',
  to_version: '4.15',
});
const elsewhere = marker({ id: '3', kind: 'code', atMs: ONSET, service: 'search', hosts: ['z'] });
const neighbour = marker({
  id: '4',
  kind: 'config',
  atMs: ONSET,
  service: 'ads',
  hosts: ['a'],
  component: 'pool',
});

describe('timeFit', () => {
  it('is 1 within the onset uncertainty plus a minute of slack, then decays: 20 min scale before, 3 min after', () => {
    expect(timeFit(ONSET, 0, ONSET)).toBe(1);
    expect(timeFit(ONSET, 0, ONSET - 3 * MIN)).toBe(1);
    expect(timeFit(ONSET, 0, ONSET + 3 * MIN)).toBe(1);
    expect(timeFit(ONSET, 0, ONSET - 23 * MIN)).toBeCloseTo(Math.exp(-1), 12);
    expect(timeFit(ONSET, 0, ONSET + 6 * MIN)).toBeCloseTo(Math.exp(-1), 12);
    // A wide onset interval widens the slack.
    expect(timeFit(ONSET, 10 * MIN, ONSET - 11 * MIN)).toBe(1);
    expect(timeFit(ONSET, 10 * MIN, ONSET - 12 * MIN)).toBeLessThan(1);
  });

  it('markerWindow covers the lookback before and the decay after', () => {
    const w = markerWindow(ONSET, 0);
    expect(w.fromMs).toBe(ONSET - LOOKBACK_MS);
    expect(w.toMs).toBe(ONSET + 3 * MIN + 30 * MIN);
  });
});

describe('rankSuspects', () => {
  it("counts the rollout's hosts that feed this series apart from other services' hosts", () => {
    const wide = marker({ ...kernel, hosts: ['b', 'z', 'y'] });
    const [s] = rankSuspects([wide], input());
    expect(s!.hosts).toEqual(['b', 'y', 'z']);
    expect(s!.series_hosts).toBe(1);
  });

  it('ranks by time, scope and specificity, drops markers out of scope, and explains each', () => {
    // The neighbour (another service's config change on a shared host) is no suspect
    // without evidence: sharing a host says nothing (it used to score 0.3).
    const s = rankSuspects([kernel, elsewhere, neighbour, release], input());
    expect(s.map((x) => x.deploy_id)).toEqual(['1', '2']);
    expect(s.map((x) => x.score)).toEqual([0.97, 0.23]);
    expect(s[0]!.reason).toBe(
      'Release 1.2 → 1.3 on checkout (a), covering 1 of 2 regressed hosts, 2 min before the onset.',
    );
    expect(s[1]!.reason).toBe(
      'Kernel change 4.4 → 4.15 on b, which feed this series, covering 1 of 2 regressed hosts, 30 min before the onset.',
    );
    expect(s[0]!.coverage).toEqual({ covered: 1, regressed: 2 });
    expect(s[0]!.deploy_ids).toEqual(['1']);
    expect(s[0]!.series_hosts).toBe(1);
    expect(s[0]!.at).toBe(new Date(ONSET - 2 * MIN).toISOString());
  });

  it("counts the callee's deploys for an edge series", () => {
    const callee = marker({ id: '5', kind: 'code', atMs: ONSET, service: 'search', hosts: ['z'] });
    const s = rankSuspects([callee], input({ view: 'client', peer: 'search' }));
    expect(s).toHaveLength(1);
    expect(s[0]!.score).toBe(0.97);
    expect(s[0]!.reason).toContain('the callee of this edge');
  });

  it('keeps the posted marker of a change also inferred from telemetry, and says so', () => {
    const twin = marker({ ...release, id: '9', source: 'inferred', atMs: ONSET - 5 * MIN });
    const s = rankSuspects([twin, release], input());
    expect(s.map((x) => x.deploy_id)).toEqual(['1']);
    expect(s[0]!.reason).toMatch(/\(also seen in telemetry\)\.$/);
    // Alone, the inferred marker is a suspect, marked as such and scored a little lower
    // (5 minutes before the onset: time fit e^-0.1, code 0.97, inferred 0.98).
    const alone = rankSuspects([twin], input());
    expect(alone[0]!.reason).toMatch(/\(inferred from telemetry\)\.$/);
    expect(alone[0]!.score).toBe(0.86);
  });

  it('lets the cohort split promote the marker that explains it and demote those it contradicts', () => {
    const cohort: Cohort = {
      attribute: 'os.version',
      slow: ['4.15'],
      fast: ['4.4'],
      slow_hosts: ['b'],
      fast_hosts: ['a'],
    };
    // The neighbour touched only a fast host: not a suspect at all (it used to rank third at 0.06).
    const s = rankSuspects([release, kernel, neighbour], input({ cohort }));
    expect(s.map((x) => x.deploy_id)).toEqual(['2', '1']);
    expect(s.map((x) => x.score)).toEqual([0.48, 0.19]);
    expect(s[0]!.reason).toContain(
      '; only hosts with os.version = 4.15 slowed down, which is what it changed',
    );
    expect(s[1]!.reason).toContain(
      '; but only os.version = 4.15 slowed down, and it changed others',
    );
  });

  it('keeps at most five suspects and none below the minimum score', () => {
    const many = Array.from({ length: 8 }, (_, i) =>
      marker({ id: `m${i}`, kind: 'code', atMs: ONSET - i * MIN, service: 'checkout' }),
    );
    expect(rankSuspects(many, input())).toHaveLength(5);
    const old = marker({
      id: 'old',
      kind: 'code',
      atMs: ONSET - 5 * 3_600_000,
      service: 'checkout',
    });
    expect(rankSuspects([old], input())).toEqual([]);
  });

  it('another service on a shared host is a suspect only when the regressed hosts are exactly the ones it touched', () => {
    const hosts = ['a', 'b', 'c'];
    const only = (slow: string[], fast: string[]): Cohort => ({
      attribute: 'host.name',
      slow,
      fast,
      slow_hosts: slow,
      fast_hosts: fast,
    });
    const exact = rankSuspects([neighbour], input({ hosts, cohort: only(['a'], ['b', 'c']) }));
    expect(exact.map((x) => x.deploy_id)).toEqual(['4']);
    expect(exact[0]!.reason).toContain('the regressed hosts are exactly the ones it touched');
    expect(exact[0]!.score).toBe(0.55);
    // It touched a, but b slowed down too: no evidence.
    expect(rankSuspects([neighbour], input({ hosts, cohort: only(['a', 'b'], ['c']) }))).toEqual(
      [],
    );
    // A whole-series step on a host it shares: no evidence either.
    expect(rankSuspects([neighbour], input({ hosts }))).toEqual([]);
  });
});

describe('incidentSuspects', () => {
  it('ranks every member’s suspects, one per rollout at its best score, the headline’s first on a tie', () => {
    // A caller's view weighs its callee's release 8 minutes early; the store's member, its bump.
    const apiRelease = marker({ id: '1', kind: 'code', atMs: ONSET - 8 * MIN, service: 'api' });
    const bump = marker({
      id: '2',
      kind: 'dependency',
      atMs: ONSET + MIN,
      service: 'store',
      component: 'driver',
    });
    const headline = rankSuspects(
      [apiRelease],
      input({ service: 'web', view: 'client', peer: 'api' }),
    );
    const apiRoute = rankSuspects([apiRelease], input({ service: 'api' }));
    const store = rankSuspects([apiRelease, bump], input({ service: 'store' }));
    expect(headline.map((x) => x.deploy_id)).toEqual(['1']);
    const all = incidentSuspects([headline, apiRoute, store]);
    expect(all.map((x) => x.deploy_id)).toEqual(['2', '1']);
    expect(all[0]!.reason).toContain('driver');
    // The api's release is listed once, at the best score a member gave it.
    expect(all[1]!.score).toBe(Math.max(headline[0]!.score, apiRoute[0]!.score));
    // Alone, the headline's list is the incident's.
    expect(incidentSuspects([headline])).toEqual(headline);
  });
});

describe('rollouts', () => {
  const k = (id: string, host: string, atMs: number, source = 'api'): Marker =>
    marker({
      id,
      kind: 'kernel',
      component: 'kernel',
      atMs,
      hosts: [host],
      from_version: '5.15',
      to_version: '6.1',
      source,
    });
  const hosts = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8'];

  it('a rollout posted per host (five markers on the onset) is one suspect with its hosts', () => {
    const five = hosts.slice(0, 5).map((h, i) => k(`k${i}`, h, ONSET - 2 * MIN + i * 10_000));
    const s = rankSuspects(five, input({ hosts }));
    expect(s).toHaveLength(1);
    expect(s[0]!.deploy_ids.sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
    expect(s[0]!.hosts).toEqual(['h1', 'h2', 'h3', 'h4', 'h5']);
    expect(s[0]!.coverage).toEqual({ covered: 5, regressed: 8 });
    expect(s[0]!.reason).toContain('one rollout of 5 markers to 5 hosts covering 5 of 8 regressed');
  });

  it('a canary (one host an hour early, then the rest) is one suspect timed by its second wave', () => {
    const canary = k('c0', 'h1', ONSET - 60 * MIN);
    const rest = hosts.slice(1).map((h, i) => k(`r${i}`, h, ONSET - 3 * MIN));
    const s = rankSuspects([canary, ...rest], input({ hosts }));
    expect(s).toHaveLength(1);
    expect(s[0]!.deploy_ids).toHaveLength(8);
    expect(s[0]!.at).toBe(new Date(ONSET - 3 * MIN).toISOString());
    expect(s[0]!.score).toBe(0.9);
    expect(s[0]!.coverage).toEqual({ covered: 8, regressed: 8 });
    // Only the canary host regressed, an hour earlier: the same rollout, timed by the canary.
    const early = rankSuspects(
      [canary, ...rest],
      input({
        hosts,
        onsetMs: ONSET - 59 * MIN,
        cohort: {
          attribute: 'os.version',
          slow: ['6.1'],
          fast: ['5.15'],
          slow_hosts: ['h1'],
          fast_hosts: hosts.slice(1),
        },
      }),
    );
    expect(early).toHaveLength(1);
    expect(early[0]!.deploy_id).toBe('c0');
    expect(early[0]!.hosts[0]).toBe('h1');
    expect(early[0]!.coverage).toEqual({ covered: 1, regressed: 1 });
  });

  it("two services' hosts in one inferred kernel marker: each regression gets its own hosts first and its own time", () => {
    const aHosts = ['a1', 'a2', 'a3', 'a4'];
    const bHosts = ['b1', 'b2', 'b3', 'b4'];
    const inferred = marker({
      id: 'inf',
      kind: 'kernel',
      component: 'kernel',
      source: 'inferred',
      atMs: ONSET - 45 * MIN,
      hosts: [...aHosts, ...bHosts].sort(),
      from_version: '5.15',
      to_version: '6.1',
      changes: [
        ...aHosts.map((h, i) => ({ service: 'alpha', host: h, atMs: ONSET - 45 * MIN + i * MIN })),
        ...bHosts.map((h, i) => ({ service: 'beta', host: h, atMs: ONSET - 2 * MIN + i * 10_000 })),
      ],
    });
    const b = rankSuspects([inferred], input({ service: 'beta', hosts: bHosts }));
    expect(b[0]!.hosts.slice(0, 4)).toEqual(bHosts);
    expect(b[0]!.coverage).toEqual({ covered: 4, regressed: 4 });
    // Within the onset's slack every host fits; the one nearest the onset is shown.
    expect(b[0]!.at).toBe(new Date(ONSET - 90_000).toISOString());
    expect(b[0]!.score).toBe(0.88);
    expect(b[0]!.reason).toMatch(/^Kernel change 5\.15 → 6\.1 on b1, b2, b3, b4, which feed/);
    const a = rankSuspects(
      [inferred],
      input({ service: 'alpha', hosts: aHosts, onsetMs: ONSET - 44 * MIN }),
    );
    expect(a[0]!.hosts.slice(0, 4)).toEqual(aHosts);
    expect(a[0]!.at).toBe(new Date(ONSET - 44 * MIN).toISOString());
    expect(a[0]!.score).toBe(0.88);
  });

  it('a posted rollout and a second one to the same kernel known only from telemetry: each regression is named after its own', () => {
    const aHosts = ['a1', 'a2', 'a3'];
    const bHosts = ['b1', 'b2', 'b3'];
    const posted = k('posted', 'a1', ONSET - 2 * MIN);
    posted.hosts = aHosts;
    const inferred = marker({
      ...k('inf', 'a1', ONSET - 2 * MIN, 'inferred'),
      hosts: [...aHosts, ...bHosts],
      changes: [
        ...aHosts.map((h) => ({ service: 'alpha', host: h, atMs: ONSET - 2 * MIN })),
        ...bHosts.map((h) => ({ service: 'beta', host: h, atMs: ONSET + 20 * MIN })),
      ],
    });
    const b = rankSuspects(
      [posted, inferred],
      input({ service: 'beta', hosts: bHosts, onsetMs: ONSET + 21 * MIN }),
    );
    expect(b[0]).toMatchObject({ deploy_id: 'inf', source: 'inferred' });
    expect(b[0]!.hosts.slice(0, 3)).toEqual(bHosts);
    expect(b[0]!.reason).toContain('(inferred from telemetry)');
    const a = rankSuspects([posted, inferred], input({ service: 'alpha', hosts: aHosts }));
    expect(a[0]).toMatchObject({ deploy_id: 'posted', source: 'api' });
    expect(a[0]!.deploy_ids).toEqual(['posted', 'inf']);
  });

  it('a canary whose host the cohort calls fast still times the rollout (the rest came 20 minutes after the onset)', () => {
    const rel = (id: string, host: string, atMs: number): Marker =>
      marker({ id, kind: 'code', service: 'checkout', hosts: [host], atMs, to_version: '2.0' });
    const five = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const markers = [
      rel('c', 'p1', ONSET),
      ...five.slice(1).map((h) => rel(`r-${h}`, h, ONSET + 20 * MIN)),
    ];
    const s = rankSuspects(
      markers,
      input({
        hosts: five,
        cohort: {
          attribute: 'host.name',
          slow: five.slice(1),
          fast: ['p1'],
          slow_hosts: five.slice(1),
          fast_hosts: ['p1'],
        },
      }),
    );
    // Named after a wave that reached the regressed hosts; timed by the canary at the onset.
    expect(s[0]).toMatchObject({ kind: 'code', score: 0.97, at: new Date(ONSET).toISOString() });
    expect(s[0]!.deploy_ids!.sort()).toEqual(['c', 'r-p2', 'r-p3', 'r-p4', 'r-p5']);
  });
});
