import { describe, expect, it } from 'vitest';
import { bucketIndex, findCohort, type CohortRow } from '../src/index.ts';
import { mulberry32 } from '@onset/testkit/random';

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
    const { levels, explained, changed, ...split } = findCohort(rows, {
      metric: 'p99',
      floorUs: 0,
    })!;
    expect(split).toEqual({
      attribute: 'os.version',
      slow: ['4.15'],
      fast: ['4.4'],
      slow_hosts: ['c', 'd'],
      fast_hosts: ['a', 'b'],
    });
    expect(changed).toBe(true);
    expect(explained).toBe(1);
    // Each side's own levels: the slow hosts went 10 ms -> 30 ms, the fast ones stayed at 10 ms.
    expect(levels!.slow.before.p50_ms).toBeCloseTo(10, 0);
    expect(levels!.slow.after.p50_ms).toBeCloseTo(30, 0);
    expect(levels!.fast.before.p50_ms).toBeCloseTo(10, 0);
    expect(levels!.fast.after.p50_ms).toBeCloseTo(10, 0);
    expect(levels!.slow.after.count).toBe(2 * 5 * 50);
  });

  it('falls back to host names when no attribute explains the split', () => {
    const rows = fleet(
      (h) => (h === 'a' ? 30_000 : 10_000),
      () => OLD,
    );
    const { levels, changed, explained, ...c } = findCohort(rows, { metric: 'p99', floorUs: 0 })!;
    expect(changed).toBe(false);
    expect(explained).toBe(1);
    expect(levels!.slow.after.p50_ms).toBeCloseTo(30, 0);
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

/**
 * A fleet minute by minute, drawn independently of the code: per host a
 * log-normal latency around its own typical value, a kernel that some hosts
 * move to (each at its own minute), and what the new kernel does to them.
 */
function kernelFleet(o: {
  hosts: Array<{
    name: string;
    typicalUs: number;
    movesAt?: number;
    slowdown?: number;
    region?: string;
  }>;
  minutes: number;
  onset: number;
  seed: number;
}): CohortRow[] {
  const rand = mulberry32(o.seed);
  const gauss = () =>
    Math.sqrt(-2 * Math.log(Math.max(1e-12, rand()))) * Math.cos(2 * Math.PI * rand());
  const rows: CohortRow[] = [];
  for (const h of o.hosts) {
    for (let m = 0; m < o.minutes; m++) {
      const moved = h.movesAt !== undefined && m >= h.movesAt;
      const counts = new Map<number, number>();
      for (let i = 0; i < 20; i++) {
        const us = h.typicalUs * (moved ? (h.slowdown ?? 1) : 1) * Math.exp(0.25 * gauss());
        const b = bucketIndex(us);
        counts.set(b, (counts.get(b) ?? 0) + 1);
      }
      rows.push({
        host: h.name,
        attrs: { 'os.version': moved ? '6.8.0-31' : '6.5.0-44', region: h.region ?? 'eu-west' },
        after: m >= o.onset,
        idx: [...counts.keys()],
        cnt: [...counts.values()],
      });
    }
  }
  return rows;
}

describe('findCohort in a fleet', () => {
  it('a kernel rollout: os.version, not host.name, even when a host moved late or slowed less; no moved host on the fast side, none on both', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rows = kernelFleet({
        seed,
        minutes: 240,
        onset: 120,
        hosts: [
          { name: 'web-01', typicalUs: 9_000, movesAt: 120, slowdown: 6 },
          { name: 'web-02', typicalUs: 12_000, movesAt: 121, slowdown: 6 },
          { name: 'web-03', typicalUs: 10_000, movesAt: 123, slowdown: 6 },
          // Moved an hour later than the others: half its after window is on the old kernel.
          { name: 'web-04', typicalUs: 11_000, movesAt: 180, slowdown: 6 },
          // Moved with the others but suffers less (a smaller working set).
          { name: 'web-05', typicalUs: 10_000, movesAt: 122, slowdown: 2.2 },
          { name: 'web-06', typicalUs: 8_000 },
          { name: 'web-07', typicalUs: 13_000 },
          { name: 'web-08', typicalUs: 10_000 },
        ],
      });
      const c = findCohort(rows, { metric: 'p50', floorUs: 0 });
      expect(c, `seed ${seed}`).not.toBeNull();
      expect(c!.attribute).toBe('os.version');
      expect(c!.slow).toEqual(['6.8.0-31']);
      expect(c!.fast).toEqual(['6.5.0-44']);
      expect(c!.changed).toBe(true);
      expect(c!.slow_hosts).toEqual(['web-01', 'web-02', 'web-03', 'web-04', 'web-05']);
      expect(c!.fast_hosts).toEqual(['web-06', 'web-07', 'web-08']);
      // The slow side's own levels: several times slower, where the whole series' p50 barely says so.
      expect(c!.levels!.slow.after.p50_ms / c!.levels!.slow.before.p50_ms).toBeGreaterThan(3);
      expect(c!.levels!.fast.after.p50_ms / c!.levels!.fast.before.p50_ms).toBeLessThan(1.2);
    }
  });

  it('a host another rollout moved to the slow kernel, whose own events did not slow down, is on neither side', () => {
    for (const seed of [1, 2, 3]) {
      const rows = kernelFleet({
        seed,
        minutes: 240,
        onset: 120,
        hosts: [
          { name: 'n-01', typicalUs: 8_000, movesAt: 120, slowdown: 50 },
          { name: 'n-02', typicalUs: 8_000, movesAt: 120, slowdown: 50 },
          { name: 'n-03', typicalUs: 8_000, movesAt: 121, slowdown: 50 },
          // On the new kernel from a minute after the onset, with the step nowhere in its events.
          { name: 'n-04', typicalUs: 8_000, movesAt: 121, slowdown: 1 },
          { name: 'n-05', typicalUs: 8_000 },
          { name: 'n-06', typicalUs: 8_000 },
        ],
      });
      const c = findCohort(rows, { metric: 'p50', floorUs: 0 });
      expect(c, `seed ${seed}`).not.toBeNull();
      expect(c!.attribute).toBe('os.version');
      expect(c!.slow_hosts).toEqual(['n-01', 'n-02', 'n-03']);
      expect(c!.fast_hosts).toEqual(['n-05', 'n-06']);
      // The slow side's levels are the slowed hosts' own.
      expect(c!.levels!.slow.after.p50_ms / c!.levels!.slow.before.p50_ms).toBeGreaterThan(30);
    }
  });

  it('prefers the attribute that changed at the onset over one that splits the same hosts by chance', () => {
    // The moved hosts happen to be exactly the us-east ones: region explains the split as well, but never changed.
    const rows = kernelFleet({
      seed: 9,
      minutes: 200,
      onset: 100,
      hosts: [
        { name: 'a', typicalUs: 5_000, movesAt: 100, slowdown: 4, region: 'us-east' },
        { name: 'b', typicalUs: 5_000, movesAt: 101, slowdown: 4, region: 'us-east' },
        { name: 'c', typicalUs: 5_000, region: 'eu-west' },
        { name: 'd', typicalUs: 5_000, region: 'eu-west' },
      ],
    });
    const c = findCohort(rows, { metric: 'p50', floorUs: 0 })!;
    expect(c.attribute).toBe('os.version');
    expect(c.slow_hosts).toEqual(['a', 'b']);
  });

  it('by host name alone, a host that moved at the onset is never called fast (a canary, the rest later)', () => {
    // The canary moved to 2.1 at the onset and slowed less than the rest, which moved 20 minutes later.
    const rows: CohortRow[] = [];
    for (const h of ['p1', 'p2', 'p3', 'p4', 'p5']) {
      const movesAt = h === 'p1' ? 60 : 80;
      for (let m = 0; m < 120; m++) {
        const v = m >= movesAt ? '2.1' : '2.0';
        const us = v === '2.1' ? (h === 'p1' ? 11_000 : 30_000) : 10_000;
        rows.push(row(h, { 'service.version': v }, m >= 60, us, 20));
      }
    }
    // Every host moved: service.version has no fast host, and host names may not call p1 fast.
    // (Before, host.name reported slow p2..p5, fast p1.)
    expect(findCohort(rows, { metric: 'p50', floorUs: 0 })).toBeNull();
  });
});
