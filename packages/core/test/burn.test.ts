import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  BURN_TIERS,
  BURN_WINDOW_NAMES,
  Histogram,
  budgetConsumed,
  budgetRemaining,
  burnRate,
  calendarPeriod,
  counterPieces,
  detectionTime,
  estimateGoodFromHistogram,
  evaluateTiers,
  firingBySeverity,
  niceCeil,
  parseSloWindow,
  regressionSeverity,
  suggestThreshold,
  tierApplies,
  tierFactor,
  timeToExhaustion,
  type BurnWindow,
  type Counts,
} from '../src/index.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** Windows where every one has the same events and error ratio. */
function uniform(total: number, bad: number): Record<BurnWindow, Counts> {
  return Object.fromEntries(
    BURN_WINDOW_NAMES.map((w) => [w, { good: total - bad, total }]),
  ) as Record<BurnWindow, Counts>;
}

describe('burn rate: SRE Workbook chapter 5 worked examples (99.9% SLO, 30-day window)', () => {
  // Table 5-4 "Burn rates and time to complete budget exhaustion".
  it.each([
    { errorRate: 0.001, burn: 1, exhaustion: 30 * DAY },
    { errorRate: 0.002, burn: 2, exhaustion: 15 * DAY },
    { errorRate: 0.01, burn: 10, exhaustion: 3 * DAY },
    { errorRate: 1, burn: 1000, exhaustion: 43.2 * MIN },
  ])(
    'error rate $errorRate burns at $burn× and exhausts the budget in $exhaustion ms',
    ({ errorRate, burn, exhaustion }) => {
      const total = 1_000_000;
      const bad = Math.round(total * errorRate);
      const rate = burnRate(total - bad, total, 0.999)!;
      expect(rate).toBeCloseTo(burn, 9);
      expect(timeToExhaustion(rate, 30 * DAY)).toBeCloseTo(exhaustion, 0);
    },
  );

  // Table 5-8 "Recommended parameters for a 99.9% SLO alerting configuration" (+ the 1d/2h ticket tier).
  it('derives the recommended factors 14.4 / 6 / 3 / 1 from the budget fractions 2% / 5% / 10% / 10%', () => {
    expect(BURN_TIERS.map((t) => [t.name, t.long, t.short, tierFactor(t, 30 * DAY)])).toEqual([
      ['page_1h', '1h', '5m', 14.4],
      ['page_6h', '6h', '30m', 6],
      ['ticket_1d', '1d', '2h', 3],
      ['ticket_3d', '3d', '6h', 1],
    ]);
    expect(budgetConsumed(14.4, HOUR, 30 * DAY)).toBe(0.02);
    expect(budgetConsumed(6, 6 * HOUR, 30 * DAY)).toBe(0.05);
    expect(budgetConsumed(3, DAY, 30 * DAY)).toBe(0.1);
    expect(budgetConsumed(1, 3 * DAY, 30 * DAY)).toBe(0.1);
  });

  it('reproduces the detection times of the Workbook approaches', () => {
    // Approach 1: error rate ≥ SLO over 10 minutes; a 100% outage is detected in 0.6 s.
    expect(detectionTime(1, 0.999, 10 * MIN, 1)).toBeCloseTo(600, 6);
    // Approach 2: 36-hour window; a 100% outage is detected in 2 min 10 s (129.6 s).
    expect(detectionTime(1, 0.999, 36 * HOUR, 1)).toBeCloseTo(129_600, 6);
    // Approach 4/6 page tier: 14.4× over 1 h: 100% errors in 51.84 s, 10% errors in 8.64 min.
    expect(detectionTime(1, 0.999, HOUR, 14.4)).toBeCloseTo(51_840, 6);
    expect(detectionTime(0.1, 0.999, HOUR, 14.4)).toBeCloseTo(8.64 * MIN, 6);
    // 1% errors is a 10× burn: it never reaches 14.4× over the hour.
    expect(detectionTime(0.01, 0.999, HOUR, 14.4)).toBe(Infinity);
  });

  it('budget remaining is 1 - burn rate over the SLO window, negative once the SLO is broken', () => {
    expect(budgetRemaining(0, 0, 0.99)).toBe(1);
    expect(budgetRemaining(9_950, 10_000, 0.99)).toBe(0.5);
    expect(budgetRemaining(9_900, 10_000, 0.99)).toBe(0);
    expect(budgetRemaining(9_800, 10_000, 0.99)).toBe(-1);
    expect(burnRate(0, 0, 0.99)).toBeNull();
  });
});

describe('tier factors scaled to the SLO window', () => {
  it('keeps the budget fractions: 28 d gives 13.44 / 5.6 / 2.8 / 1 (0.933 clamped to 1)', () => {
    expect(BURN_TIERS.map((t) => tierFactor(t, 28 * DAY))).toEqual([13.44, 5.6, 2.8, 1]);
    expect(BURN_TIERS.map((t) => tierFactor(t, 90 * DAY))).toEqual([43.2, 18, 9, 3]);
    expect(BURN_TIERS.map((t) => tierFactor(t, 7 * DAY))).toEqual([3.36, 1.4, 1, 1]);
  });

  it('switches off tiers whose long window does not fit in the SLO window', () => {
    expect(BURN_TIERS.filter((t) => tierApplies(t, DAY)).map((t) => t.name)).toEqual([
      'page_1h',
      'page_6h',
      'ticket_1d',
    ]);
    expect(BURN_TIERS.filter((t) => tierApplies(t, 2 * HOUR)).map((t) => t.name)).toEqual([
      'page_1h',
    ]);
  });

  it('never asks for a burn below 1 (that would not exhaust the budget)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 400 * 24 * 60 }), (minutes) => {
        for (const t of BURN_TIERS) expect(tierFactor(t, minutes * MIN)).toBeGreaterThanOrEqual(1);
      }),
    );
  });
});

describe('multiwindow, multi-burn-rate evaluation', () => {
  const opts = { objective: 0.999, sloWindowMs: 30 * DAY };

  it('pages when both the 1 h and the 5 m window burn at 14.4× or more', () => {
    const w = uniform(10_000, 150); // 1.5% errors = 15×
    const r = evaluateTiers(w, opts);
    expect(r.find((t) => t.name === 'page_1h')!.firing).toBe(true);
    expect(firingBySeverity(r).get('page')!.name).toBe('page_1h');
    // 15× also satisfies 6×, 3× and 1×: every tier fires.
    expect(r.every((t) => t.firing)).toBe(true);
  });

  it('resets as soon as the short window recovers, though the long window still burns', () => {
    const w = uniform(10_000, 150);
    w['5m'] = { good: 1_000, total: 1_000 };
    const r = evaluateTiers(w, opts);
    expect(r.find((t) => t.name === 'page_1h')!.firing).toBe(false);
    expect(r.find((t) => t.name === 'page_6h')!.firing).toBe(true); // 30 m still burning
  });

  it('does not page on a brief spike that the long window absorbs', () => {
    const w = uniform(10_000, 5); // 0.05% errors = 0.5×
    w['5m'] = { good: 800, total: 1_000 }; // 20% errors for 5 minutes = 200×
    const r = evaluateTiers(w, opts);
    expect(firingBySeverity(r).size).toBe(0);
  });

  it('low traffic: one slow event never pages, however high the burn rate', () => {
    const w = uniform(10, 1); // 10% errors = 100× — but one event
    expect(firingBySeverity(evaluateTiers(w, opts)).size).toBe(0);
    const many = uniform(10_000, 1); // one bad event among many: 0.1× burn
    expect(firingBySeverity(evaluateTiers(many, opts)).size).toBe(0);
    // Below min_events a window never counts, even if everything is slow.
    expect(firingBySeverity(evaluateTiers(uniform(19, 19), opts)).size).toBe(0);
    expect(firingBySeverity(evaluateTiers(uniform(20, 20), opts)).get('page')).toBeDefined();
    // The guard is per SLO.
    expect(
      firingBySeverity(
        evaluateTiers(uniform(5, 5), { ...opts, guard: { minEvents: 5, minBadEvents: 2 } }),
      ).get('page'),
    ).toBeDefined();
  });

  it('honours per-SLO tier switches', () => {
    const w = uniform(10_000, 150);
    const r = evaluateTiers(w, { ...opts, enabled: { page_1h: false, page_6h: false } });
    expect(firingBySeverity(r).has('page')).toBe(false);
    expect(firingBySeverity(r).get('ticket')!.name).toMatch(/ticket/);
  });
});

describe('SLO windows', () => {
  it('parses rolling windows of any length and calendar months', () => {
    expect(parseSloWindow('28d')).toEqual({ kind: 'rolling', ms: 28 * DAY, text: '28d' });
    expect(parseSloWindow('13d')).toMatchObject({ kind: 'rolling', ms: 13 * DAY });
    expect(parseSloWindow('36h')).toMatchObject({ kind: 'rolling', ms: 36 * HOUR });
    expect(parseSloWindow('1M')).toEqual({
      kind: 'calendar',
      unit: 'month',
      timeZone: 'UTC',
      text: '1M',
    });
    expect(parseSloWindow('1w', { calendar: true, timeZone: 'Europe/Berlin' })).toMatchObject({
      kind: 'calendar',
      unit: 'week',
    });
    expect(() => parseSloWindow('1y')).toThrow(/window/);
    expect(() => parseSloWindow('1m')).toThrow(/between 5m and 400d/);
    expect(() => parseSloWindow('1M', { timeZone: 'Mars/Olympus' })).toThrow(/time zone/);
  });

  it('finds calendar months in UTC and across a DST change', () => {
    const feb = calendarPeriod(Date.parse('2026-02-15T12:00:00Z'), 'month', 'UTC');
    expect(new Date(feb.start).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect((feb.end - feb.start) / DAY).toBe(28);
    const mar = calendarPeriod(Date.parse('2026-03-20T12:00:00Z'), 'month', 'America/New_York');
    expect(new Date(mar.start).toISOString()).toBe('2026-03-01T05:00:00.000Z');
    expect(new Date(mar.end).toISOString()).toBe('2026-04-01T04:00:00.000Z');
    const dec = calendarPeriod(Date.parse('2026-12-31T23:30:00Z'), 'month', 'Europe/Berlin');
    expect(new Date(dec.start).toISOString()).toBe('2026-12-31T23:00:00.000Z'); // already January in Berlin
    const week = calendarPeriod(Date.parse('2026-01-01T10:00:00Z'), 'week', 'UTC'); // a Thursday
    expect(new Date(week.start).toISOString()).toBe('2025-12-29T00:00:00.000Z');
  });

  it('reads whole days and hours from daily and hourly counters, the ragged edges from minute counters', () => {
    const t = (s: string) => Date.parse(`2026-05-01T${s}:00Z`);
    const horizon = t('00:00');
    expect(counterPieces(t('10:30'), t('13:20'), horizon).pieces).toEqual([
      { table: 'minute', from: t('10:30'), to: t('11:00') },
      { table: 'hour', from: t('11:00'), to: t('13:00') },
      { table: 'minute', from: t('13:00'), to: t('13:20') },
    ]);
    expect(counterPieces(t('13:05'), t('13:10'), horizon).pieces).toEqual([
      { table: 'minute', from: t('13:05'), to: t('13:10') },
    ]);
    // Whole UTC days come from the daily counters.
    const d = (s: string) => Date.parse(`2026-05-${s}:00Z`);
    expect(counterPieces(d('01T22:30'), d('04T01:10'), horizon).pieces).toEqual([
      { table: 'minute', from: d('01T22:30'), to: d('01T23:00') },
      { table: 'hour', from: d('01T23:00'), to: d('02T00:00') },
      { table: 'day', from: d('02T00:00'), to: d('04T00:00') },
      { table: 'hour', from: d('04T00:00'), to: d('04T01:00') },
      { table: 'minute', from: d('04T01:00'), to: d('04T01:10') },
    ]);
    // Older than the minute horizon: start rounds up to the whole hour.
    const old = counterPieces(t('10:30'), t('13:20'), t('12:00'));
    expect(old.start).toBe(t('11:00'));
    expect(old.pieces[0]).toEqual({ table: 'hour', from: t('11:00'), to: t('13:00') });
  });

  it('pieces always tile the window without overlap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        (a, len) => {
          const start = Date.parse('2026-01-01T00:00:00Z') + a * MIN;
          const end = start + len * MIN;
          const { pieces } = counterPieces(start, end, 0);
          expect(pieces[0]!.from).toBe(start);
          expect(pieces.at(-1)!.to).toBe(end);
          for (let i = 1; i < pieces.length; i++) expect(pieces[i]!.from).toBe(pieces[i - 1]!.to);
          for (const p of pieces) {
            if (p.table === 'hour') expect([p.from % HOUR, p.to % HOUR]).toEqual([0, 0]);
            if (p.table === 'day') expect([p.from % DAY, p.to % DAY]).toEqual([0, 0]);
          }
        },
      ),
    );
  });
});

describe('default SLO suggestion', () => {
  it('rounds thresholds up to readable values', () => {
    expect([0.83, 1.1, 2.2, 3, 12, 120, 4500].map(niceCeil)).toEqual([
      1, 1.5, 2.5, 3, 15, 150, 5000,
    ]);
  });

  it('estimates good events from a histogram to within the straddling bucket', () => {
    const h = new Histogram();
    for (let i = 1; i <= 1000; i++) h.record(i * 100); // 0.1 ms … 100 ms
    const sparse = h.toSparse();
    expect(estimateGoodFromHistogram(sparse, 50_000)).toBeGreaterThan(490);
    expect(estimateGoodFromHistogram(sparse, 50_000)).toBeLessThan(510);
    expect(estimateGoodFromHistogram(sparse, 1e9)).toBe(1000);
    expect(estimateGoodFromHistogram(sparse, 1)).toBe(0);
  });

  it('suggests the history quantile with headroom, which the history would have met', () => {
    const h = new Histogram();
    for (let i = 0; i < 9_900; i++) h.record(2_000 + (i % 100) * 50); // 2–7 ms
    for (let i = 0; i < 100; i++) h.record(40_000); // 1% at 40 ms
    const s = suggestThreshold(h.toSparse(), 0.99)!;
    expect(s.quantile_ms).toBeGreaterThan(6.8);
    expect(s.quantile_ms).toBeLessThan(7.2);
    expect(s.threshold_ms).toBe(10); // 7 ms × 1.2 = 8.4 → 10
    expect(s.expected_sli).toBeGreaterThanOrEqual(0.99);
    expect(suggestThreshold({ idx: [], cnt: [] }, 0.99)).toBeNull();
  });
});

describe('regression severity', () => {
  it('pages when the regression pushes a watched series past its SLO threshold, or grows ≥ 10×', () => {
    const r = { ratio_p50: 1.5, ratio_p99: 2, after_p99_ms: 150 };
    expect(regressionSeverity(r, [])).toBe('ticket');
    expect(regressionSeverity(r, [200])).toBe('ticket');
    expect(regressionSeverity(r, [200, 100])).toBe('page');
    expect(regressionSeverity({ ratio_p50: 45.4, ratio_p99: 29.7, after_p99_ms: 41.6 }, [])).toBe(
      'page',
    );
  });
});
