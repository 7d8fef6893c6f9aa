import { describe, expect, it } from 'vitest';
import type {
  Deploy,
  QuantilesColumns,
  Regression,
  Series,
  Slo,
  SloStatus,
  View,
} from '@onset/contract';
import { columnsOf } from './columns.ts';
import { deployOf, regressionOf, seriesOf, sloOf, sloStatusOf } from './fixtures.ts';
import {
  rankRegressions,
  regressionScore,
  slosWatching,
  headlineQuantile,
} from '../src/lib/severity.ts';
import { shapeCohorts, splitCandidates } from '../src/components/graphs/cohortData.ts';
import { sortSlosByBudget, tierFactor } from '../src/lib/slos.ts';
import { filterDeploys, timelineLanes, HOST_LANE } from '../src/components/graphs/timelineData.ts';
import {
  describeRange,
  refreshInterval,
  regressionWindow,
  resolveRange,
  zoomOut,
  zoomRange,
  fromLocalInput,
  toLocalInput,
} from '../src/state/timeRange.ts';
import { applyPatch, linkWithGlobals } from '../src/state/url.ts';
import { formatChange, safeHttpUrl } from '../src/lib/format.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const series = (
  id: string,
  service: string,
  view: View,
  name: string,
  peer: string | null = null,
  hosts: string[] = [],
): Series => seriesOf({ id, service, op: 'request', view, name, peer, hosts });
const reg = (over: Partial<Regression>): Regression =>
  regressionOf({
    id: 'r',
    service: 'checkout',
    op: 'request',
    view: 'gap',
    name: 'GET /lookup',
    peer: 'urlite',
    onset: iso(T0),
    before: { p50_ms: 1, p99_ms: 1.4, count: 50_000 },
    after: { p50_ms: 41, p99_ms: 41.6, count: 8000 },
    ratio_p50: 41,
    ratio_p99: 29.7,
    status: 'open',
    ...over,
  });
const slo = (over: Partial<Slo>): Slo => sloOf(over);

describe('ranking regressions: ratio × traffic × SLO impact', () => {
  it('puts a ×700 regression above a ×2 one at equal traffic', () => {
    const ranked = rankRegressions(
      [
        reg({ id: 'small', ratio_p50: 2, ratio_p99: 2 }),
        reg({ id: 'big', ratio_p50: 710, ratio_p99: 3 }),
      ],
      [],
    );
    expect(ranked.map((x) => x.r.id)).toEqual(['big', 'small']);
  });

  it('puts a busy endpoint above a rarely called one at equal ratio', () => {
    const rare = reg({ id: 'rare', after: { p50_ms: 41, p99_ms: 41, count: 3 } });
    const busy = reg({ id: 'busy', after: { p50_ms: 41, p99_ms: 41, count: 300_000 } });
    expect(rankRegressions([rare, busy], []).map((x) => x.r.id)).toEqual(['busy', 'rare']);
  });

  it('multiplies by the impact on a paging SLO of the same series', () => {
    const a = reg({ id: 'a', service: 'a', series_id: '1' });
    const b = reg({ id: 'b', service: 'b', series_id: '2' });
    const paging = slo({
      id: 'p',
      service: 'b',
      status: sloStatusOf({
        sli: 0.9,
        budget_remaining: -1,
        alert: { id: 'a', severity: 'page', since: iso(T0), acknowledged: false },
      }),
    });
    // Series 2 is watched by the paging SLO, as the server says (GET /api/v1/slos/watching).
    const watching = new Map([
      ['1', []],
      ['2', ['p']],
    ]);
    expect(regressionScore(b, [paging], watching)).toBeGreaterThan(
      regressionScore(a, [paging], watching) * 3,
    );
    expect(rankRegressions([a, b], [paging], watching)[0]!.r.id).toBe('b');
    // Without the server's answer no SLO counts: the web never matches selectors itself.
    expect(regressionScore(b, [paging])).toBe(regressionScore(a, [paging]));
  });

  it("takes the SLOs that watch a series from the server's membership answer", () => {
    const slos = [slo({ id: 'x' }), slo({ id: 'y' })];
    expect(
      slosWatching(reg({ series_id: '9' }), slos, new Map([['9', ['y']]])).map((s) => s.id),
    ).toEqual(['y']);
    expect(slosWatching(reg({ series_id: '8' }), slos, new Map([['9', ['y']]]))).toEqual([]);
    // Selector and name_match semantics (PostgreSQL regex) are tested on the server: slo-history.test.ts.
  });

  it('headlines the quantile that moved most', () => {
    expect(headlineQuantile({ ratio_p50: 1.2, ratio_p99: 392 })).toBe('p99');
    expect(headlineQuantile({ ratio_p50: 41, ratio_p99: 29 })).toBe('p50');
    expect(formatChange(3.1, 2200, 710)).toBe('3.10 ms → 2.20 s, ×710');
  });
});

describe('cohort split', () => {
  const q = (values: Array<[number, number]>): QuantilesColumns => ({
    series: series('1', 's', 'internal', 'n'),
    from: iso(T0),
    to: iso(T0 + 3_600_000),
    step_ms: 60_000,
    columns: columnsOf(
      values.map(([m, v]) => ({ t: T0 + m * 60_000, count: 1, q: { '0.5': v, '0.99': v } })),
    ),
  });

  it('flags the cohort that got slow, even one that only exists after the onset', () => {
    const onset = T0 + 3 * 60_000;
    const { frame, summary } = shapeCohorts(
      [
        {
          value: '4.4.0-138',
          resp: q([
            [0, 20],
            [1, 21],
            [2, 19],
            [3, 20],
            [4, 22],
          ]),
        },
        {
          value: '4.15.0-36',
          resp: q([
            [3, 9000],
            [4, 9500],
          ]),
        },
      ],
      '0.5',
      { onsetMs: onset },
    );
    expect(frame.lines.map((l) => l.label)).toEqual(['4.4.0-138', '4.15.0-36']);
    expect(summary.find((c) => c.value === '4.15.0-36')!.slow).toBe(true);
    expect(summary.find((c) => c.value === '4.4.0-138')!.slow).toBe(false);
    expect(summary.find((c) => c.value === '4.15.0-36')!.beforeMs).toBeNull();
  });

  it('flags a new version that replaced an old one (cohorts that never overlap in time)', () => {
    const onset = T0 + 2 * 60_000;
    const { summary } = shapeCohorts(
      [
        {
          value: '1.4.0',
          resp: q([
            [0, 0.2],
            [1, 0.21],
          ]),
        },
        {
          value: '1.5.0',
          resp: q([
            [2, 40.2],
            [3, 40.4],
          ]),
        },
      ],
      '0.5',
      { onsetMs: onset },
    );
    expect(summary.map((c) => [c.value, c.slow])).toEqual([
      ['1.4.0', false],
      ['1.5.0', true],
    ]);
  });

  it('trusts the engine’s slow list when given', () => {
    const { summary } = shapeCohorts(
      [
        { value: 'a', resp: q([[0, 1]]) },
        { value: 'b', resp: q([[0, 1]]) },
      ],
      '0.5',
      { slow: ['b'] },
    );
    expect(summary.map((c) => c.slow)).toEqual([false, true]);
  });

  it('offers attributes with several values, kernel first', () => {
    expect(
      splitCandidates({
        series_id: '1',
        attributes: [
          {
            key: 'service.version',
            values: [
              { value: '1', hosts: [], last_seen: '' },
              { value: '2', hosts: [], last_seen: '' },
            ],
          },
          { key: 'host.arch', values: [{ value: 'amd64', hosts: [], last_seen: '' }] },
          {
            key: 'os.version',
            values: [
              { value: 'a', hosts: [], last_seen: '' },
              { value: 'b', hosts: [], last_seen: '' },
            ],
          },
        ],
      }),
    ).toEqual(['os.version', 'service.version']);
  });
});

// The burn-rate and budget maths moved to the server (core: packages/core/test/burn-history.test.ts).
describe('SLO lists', () => {
  it('sorts SLOs by budget left, unknown last', () => {
    const s = (name: string, b: number | null) =>
      slo({
        name,
        // An SLO listed without a status (defensive: the contract always sends one) sorts last.
        status:
          b === null
            ? (undefined as unknown as SloStatus)
            : sloStatusOf({ sli: 1, budget_remaining: b }),
      });
    expect(
      sortSlosByBudget([s('a', 0.9), s('b', null), s('c', -0.2), s('d', 0.1)]).map((x) => x.name),
    ).toEqual(['c', 'd', 'a', 'b']);
  });

  it("reads the alert thresholds from the server's tiers, never its own", () => {
    const state = {
      burn_long: null,
      burn_short: null,
      events_long: 0,
      events_short: 0,
      firing: false,
    };
    const tiers = [
      {
        name: 'page_1h',
        severity: 'page' as const,
        long: '1h',
        short: '5m',
        enabled: true,
        factor: 13.44,
        ...state,
      },
      {
        name: 'ticket_3d',
        severity: 'ticket' as const,
        long: '3d',
        short: '6h',
        enabled: false,
        factor: 1,
        ...state,
      },
    ];
    const s = slo({ status: sloStatusOf({ sli: 1, budget_remaining: 1, tiers }) });
    expect(tierFactor(s, '1h')).toBe(13.44);
    expect(tierFactor(s, '3d')).toBeUndefined();
    expect(tierFactor(slo({}), '1h')).toBeUndefined();
  });
});

describe('time ranges in the URL', () => {
  const now = T0;
  it('resolves relative and absolute ranges, and falls back on nonsense', () => {
    expect(resolveRange({ from: 'now-6h', to: 'now' }, now)).toEqual({
      fromMs: now - 6 * 3_600_000,
      toMs: now,
      valid: true,
    });
    expect(resolveRange({ from: iso(now - 1000), to: iso(now) }, now).valid).toBe(true);
    const bad = resolveRange({ from: 'yesterday', to: 'now' }, now);
    expect(bad.valid).toBe(false);
    expect(bad.toMs - bad.fromMs).toBe(6 * 3_600_000);
  });

  it('describes ranges the way people say them', () => {
    expect(describeRange({ from: 'now-24h', to: 'now' }, now)).toBe('Last 24 hours');
    expect(describeRange({ from: 'now-90m', to: 'now' }, now)).toBe('Last 90m');
  });

  it('zooms to absolute times and back out', () => {
    const z = zoomRange(now + 1500, now - 60_500);
    expect(Date.parse(z.from)).toBeLessThanOrEqual(now - 60_500);
    expect(Date.parse(z.to)).toBeGreaterThanOrEqual(now + 1500);
    const out = zoomOut({ fromMs: now - 3_600_000, toMs: now - 1_800_000 }, now);
    expect(Date.parse(out.to) - Date.parse(out.from)).toBe(3_600_000);
  });

  it('refreshes relative ranges by default, fixed ones only when asked', () => {
    expect(refreshInterval(null, { from: 'now-6h', to: 'now' })).toBe(60_000);
    expect(refreshInterval(null, { from: iso(now - 1), to: iso(now) })).toBe(false);
    expect(refreshInterval('10s', { from: iso(now - 1), to: iso(now) })).toBe(10_000);
    expect(refreshInterval('off', { from: 'now-6h', to: 'now' })).toBe(false);
  });

  it('opens a regression with more history before the onset than after, up to now', () => {
    const w = regressionWindow(now - 3_600_000, now);
    expect(w.to).toBe('now');
    expect(Date.parse(w.from)).toBe(now - 3 * 3_600_000);
    const old = regressionWindow(now - 10 * 86_400_000, now);
    expect(Date.parse(old.to) - Date.parse(old.from)).toBe(3 * 86_400_000);
  });

  it('round-trips datetime-local input', () => {
    const t = new Date(2026, 10, 20, 10, 43).getTime();
    expect(fromLocalInput(toLocalInput(t))).toBe(t);
    expect(Number.isNaN(fromLocalInput('nope'))).toBe(true);
  });

  it('patches URL params and carries the global ones across pages', () => {
    const p = new URLSearchParams('from=now-1h&series=3&scale=linear');
    expect(applyPatch(p, { series: null, host: 'a' }).toString()).toBe(
      'from=now-1h&scale=linear&host=a',
    );
    expect(linkWithGlobals('/deploys', p, { kind: 'kernel' })).toBe(
      '/deploys?from=now-1h&scale=linear&kind=kernel',
    );
  });
});

// The Explorer pickers' cases (narrowing, the one series, dropped later choices) run on the
// server over 5,000 series: apps/server/test/series-list.test.ts.

// Edge membership and relevant deploys are the server's: packages/core/test/edges.test.ts and
// apps/server/test/deploys-relevance.test.ts.

describe('deploys timeline', () => {
  const d = (id: string, atMs: number, x: Partial<Deploy> = {}): Deploy =>
    deployOf({ id, kind: 'code', at: iso(atMs), ...x });
  it('puts markers in lanes per service, host-only changes last, at their fraction of the range', () => {
    const lanes = timelineLanes(
      [
        d('1', T0 + 50, { service: 'a' }),
        d('2', T0 + 25, { kind: 'kernel', hosts: ['n'] }),
        d('3', T0 + 200, { service: 'a' }),
      ],
      {
        fromMs: T0,
        toMs: T0 + 100,
      },
    );
    expect(lanes.map((l) => l.key)).toEqual(['a', HOST_LANE]);
    expect(lanes[0]!.items.map((i) => i.pos)).toEqual([0.5]);
  });

  it('filters by kind, service, host and source', () => {
    const list = [
      d('1', T0, { service: 'a', source: 'api' }),
      d('2', T0, { kind: 'kernel', hosts: ['n'], source: 'inferred' }),
    ];
    expect(filterDeploys(list, { source: 'inferred' }).map((x) => x.id)).toEqual(['2']);
    expect(filterDeploys(list, { host: 'n', kind: 'kernel' }).map((x) => x.id)).toEqual(['2']);
    expect(filterDeploys(list, { service: 'a' }).map((x) => x.id)).toEqual(['1']);
  });
});

describe('links from CI', () => {
  it('only makes http(s) links', () => {
    expect(safeHttpUrl('https://ci.example/run/1')).toBe('https://ci.example/run/1');
    expect(safeHttpUrl('javascript:alert(1)')).toBeNull();
    expect(safeHttpUrl('data:text/html,x')).toBeNull();
    expect(safeHttpUrl('/relative')).toBeNull();
  });
});
