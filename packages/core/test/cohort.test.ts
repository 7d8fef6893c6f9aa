import { describe, expect, it } from 'vitest';
import { bucketIndex, findCohort, type CohortRow } from '../src/index.ts';

/** One minute of one host: `n` events at `us` microseconds. */
function row(
  host: string,
  attrs: Record<string, string>,
  after: boolean,
  us: number,
  n = 50,
): CohortRow {
  return { host, attrs, after, idx: [bucketIndex(us)], cnt: [n] };
}

const OLD = { 'os.version': '4.4', region: 'eu' };
const NEW = { 'os.version': '4.15', region: 'eu' };

function fleet(
  afterUs: (host: string) => number,
  attrsAfter: (host: string) => Record<string, string>,
) {
  const rows: CohortRow[] = [];
  for (const h of ['a', 'b', 'c', 'd']) {
    for (let m = 0; m < 5; m++) rows.push(row(h, OLD, false, 10_000));
    for (let m = 0; m < 5; m++) rows.push(row(h, attrsAfter(h), true, afterUs(h)));
  }
  return rows;
}

describe('findCohort', () => {
  it('names the attribute value that carries the step (a new kernel on half the hosts)', () => {
    const slow = new Set(['c', 'd']);
    const rows = fleet(
      (h) => (slow.has(h) ? 30_000 : 10_000),
      (h) => (slow.has(h) ? NEW : OLD),
    );
    // (The p50 of the whole series does not move when half the hosts slow down: the p99 does.)
    expect(findCohort(rows, { metric: 'p50', floorUs: 0 })).toBeNull();
    expect(findCohort(rows, { metric: 'p99', floorUs: 0 })).toEqual({
      attribute: 'os.version',
      slow: ['4.15'],
      fast: ['4.4'],
      slow_hosts: ['c', 'd'],
      fast_hosts: ['a', 'b'],
    });
  });

  it('falls back to host names when no attribute explains the split', () => {
    const rows = fleet(
      (h) => (h === 'a' ? 30_000 : 10_000),
      () => OLD,
    );
    const c = findCohort(rows, { metric: 'p99', floorUs: 0 });
    expect(c).toEqual({
      attribute: 'host.name',
      slow: ['a'],
      fast: ['b', 'c', 'd'],
      slow_hosts: ['a'],
      fast_hosts: ['b', 'c', 'd'],
    });
  });

  it('finds nothing for a step everywhere, no step, a half-moved group or too few events', () => {
    const everywhere = fleet(
      () => 30_000,
      (h) => (h < 'c' ? OLD : NEW),
    );
    expect(findCohort(everywhere, { metric: 'p50', floorUs: 0 })).toBeNull();
    const flat = fleet(
      () => 10_000,
      (h) => (h < 'c' ? OLD : NEW),
    );
    expect(findCohort(flat, { metric: 'p50', floorUs: 0 })).toBeNull();
    // Host c carries ~40% of the step: neither slow nor fast, so the split is inconclusive.
    const between = fleet(
      (h) => (h === 'd' ? 40_000 : h === 'c' ? 17_400 : 10_000),
      () => OLD,
    );
    expect(findCohort(between, { metric: 'p50', floorUs: 0 })).toBeNull();
    const sparse = fleet(
      (h) => (h === 'a' ? 30_000 : 10_000),
      () => OLD,
    ).map((r) => ({
      ...r,
      cnt: [1],
    }));
    expect(findCohort(sparse, { metric: 'p50', floorUs: 0, minEvents: 30 })).toBeNull();
    expect(findCohort([], { metric: 'p50', floorUs: 0 })).toBeNull();
  });
});
