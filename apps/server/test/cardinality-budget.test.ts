/** The in-memory counts behind the cardinality limits: reservations, settling and reloads. */
import { describe, expect, it } from 'vitest';
import { Budget, visibleIn } from '../src/cardinality/budget.ts';

describe('Budget', () => {
  it('takes slots up to the per-service and the global limit, and gives back the unused ones', () => {
    const b = new Budget(2, 3);
    expect(b.tryReserve('a')).toBeNull();
    expect(b.tryReserve('a')).toBeNull();
    expect(b.tryReserve('a')).toBe('service_limit');
    expect(b.tryReserve('b')).toBeNull();
    expect(b.tryReserve('c')).toBe('global_limit');
    // 'b' existed already: its slot comes back and 'c' fits.
    b.settle('b', false);
    expect(b.count()).toBe(2);
    expect(b.tryReserve('c')).toBeNull();
    expect(b.servicesAtLimit()).toEqual(['a']);
    expect(b.globalReached()).toBe(true);
  });

  it('0 means no limit', () => {
    const b = new Budget(0, 0);
    for (let i = 0; i < 1000; i++) expect(b.tryReserve('a')).toBeNull();
    expect(b.globalReached()).toBe(false);
  });

  it('a reload keeps reservations in flight and rows created while its query ran', () => {
    const b = new Budget(10, 10);
    b.tryReserve('a'); // in flight across the reload
    b.beginReload();
    b.tryReserve('a');
    b.settle('a', true); // created after the reload's query started: maybe not in its answer
    b.load([{ service: 'a', n: 3 }]);
    expect(b.count('a')).toBe(5); // 3 from the database + 1 in flight + 1 created meanwhile
    b.settle('a', false); // the in-flight one existed already
    expect(b.count('a')).toBe(4);
    b.load([{ service: 'a', n: 4 }]);
    expect(b.count('a')).toBe(4);
  });

  it('rows created during a reload count once: added only when its snapshot did not see them', () => {
    const b = new Budget(100, 100);
    b.beginReload();
    for (const xid of [99n, 102n, 106n]) {
      expect(b.tryReserve('a')).toBeNull();
      b.settle('a', true, xid);
    }
    // The count query saw 10 rows, under a snapshot where 102 was still running and 105+ had not started.
    b.load([{ service: 'a', n: 10 }], '100:105:102');
    expect(b.count('a')).toBe(12); // 99 was in the 10; 102 and 106 were not
    const seen = visibleIn('100:105:102,103');
    expect([99n, 100n, 102n, 103n, 104n, 105n].map(seen)).toEqual([
      true,
      true,
      false,
      false,
      true,
      false,
    ]);
  });

  it('never admits past a limit however reservations and reloads interleave', () => {
    const b = new Budget(5, 0);
    let created = 0;
    const inFlight: boolean[] = [];
    for (let step = 0; step < 2000; step++) {
      const r = (step * 7919) % 10;
      if (r < 5) {
        if (b.tryReserve('s') === null) inFlight.push(true);
      } else if (r < 8 && inFlight.length) {
        inFlight.pop();
        const made = step % 3 !== 0;
        if (made) created++;
        b.settle('s', made);
      } else if (r === 8) b.beginReload();
      else b.load([{ service: 's', n: created }]);
      expect(created).toBeLessThanOrEqual(5);
      expect(b.count('s')).toBeGreaterThanOrEqual(created);
    }
  });
});
