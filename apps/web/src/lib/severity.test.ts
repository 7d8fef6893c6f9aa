import { describe, expect, it } from 'vitest';
import type { Regression, Slo } from '@onset/contract';
import { regressionOf, sloOf, sloStatusOf } from '../../test/fixtures.ts';
import { rankRegressions, regressionScore, slosWatching, headlineQuantile } from './severity.ts';
import { formatChange } from './format.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
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
