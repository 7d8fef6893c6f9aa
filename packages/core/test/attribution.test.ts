import { describe, expect, it } from 'vitest';
import {
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
  it('ranks by time, scope and specificity, drops markers out of scope, and explains each', () => {
    const s = rankSuspects([kernel, elsewhere, neighbour, release], input());
    expect(s.map((x) => x.deploy_id)).toEqual(['1', '4', '2']);
    expect(s.map((x) => x.score)).toEqual([0.97, 0.3, 0.23]);
    expect(s[0]!.reason).toBe('Release 1.2 → 1.3 on checkout (a), 2 min before the onset.');
    expect(s[1]!.reason).toBe(
      'Config change (pool) on ads, which shares a with this series, at the onset.',
    );
    expect(s[2]!.reason).toBe(
      'Kernel change 4.4 → 4.15 on b, which feed this series, 30 min before the onset.',
    );
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
    const s = rankSuspects([release, kernel, neighbour], input({ cohort }));
    expect(s.map((x) => x.deploy_id)).toEqual(['2', '1', '4']);
    expect(s.map((x) => x.score)).toEqual([0.48, 0.19, 0.06]);
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
});
