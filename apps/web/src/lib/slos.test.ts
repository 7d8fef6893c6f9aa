import { describe, expect, it } from 'vitest';
import type { Slo, SloStatus } from '@onset/contract';
import { sloOf, sloStatusOf } from '../../test/fixtures.ts';
import { burningSlos, sortSlosByBudget, tierFactor } from './slos.ts';

const slo = (over: Partial<Slo>): Slo => sloOf(over);

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

  it('lists every SLO whose alert is open on the overview, however many others burn more', () => {
    const s = (name: string, budget: number, alerting = false) =>
      slo({
        name,
        status: {
          ...sloStatusOf({ sli: 0.99, budget_remaining: budget }),
          alert: alerting ? ({ id: '1' } as SloStatus['alert']) : null,
        },
      });
    // Ten SLOs with less budget left than the paging one, which has 0.45 left.
    const slos = [
      ...Array.from({ length: 10 }, (_, i) => s(`low-${i}`, -1 + i / 10)),
      s('paging', 0.45, true),
      s('healthy', 0.9),
    ];
    const { shown, more } = burningSlos(slos, 8);
    expect(shown.map((x) => x.name)).toEqual([
      'paging',
      ...Array.from({ length: 7 }, (_, i) => `low-${i}`),
    ]);
    expect(more).toBe(3);
    expect(burningSlos(slos.slice(10), 8)).toEqual({ shown: [slos[10]], more: 0 });
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
