import { describe, expect, it } from 'vitest';
import { selectionLifts, type EvidenceSample } from '../src/index.ts';

const call = (ms: number, attrs: EvidenceSample['attrs']): EvidenceSample => ({ ms, attrs });

describe('selectionLifts: a selection of calls against the rest by attribute', () => {
  it('puts the value the selection is made of first, with its shares and counts', () => {
    const selected = [
      ...Array.from({ length: 8 }, () => call(50, { 'host.name': 'slow-1', region: 'eu' })),
      ...Array.from({ length: 2 }, () => call(50, { 'host.name': 'fast-1', region: 'eu' })),
    ];
    const rest = [
      ...Array.from({ length: 5 }, () => call(5, { 'host.name': 'slow-1', region: 'eu' })),
      ...Array.from({ length: 15 }, () => call(5, { 'host.name': 'fast-1', region: 'us' })),
    ];
    const lifts = selectionLifts(selected, rest);
    expect(lifts[0]).toEqual({
      key: 'region',
      value: 'eu',
      share_selected: 1,
      share_rest: 0.25,
      lift: 0.75,
      count_selected: 10,
      count_rest: 5,
    });
    expect(lifts[1]).toEqual({
      key: 'host.name',
      value: 'slow-1',
      share_selected: 0.8,
      share_rest: 0.25,
      lift: 0.55,
      count_selected: 8,
      count_rest: 5,
    });
    // Only positive lifts: fast-1 (0.2 vs 0.75) is not listed.
    expect(lifts.map((l) => `${l.key}=${l.value}`)).toEqual(['region=eu', 'host.name=slow-1']);
  });

  it('buckets numbers by powers of two and leaves out id-like keys', () => {
    const selected = Array.from({ length: 100 }, (_, i) =>
      call(9, { fds: 2048 + i, 'request.id': `r${i}` }),
    );
    const rest = Array.from({ length: 100 }, (_, i) =>
      call(1, { fds: 100, 'request.id': `q${i}` }),
    );
    const lifts = selectionLifts(selected, rest);
    expect(lifts).toEqual([
      {
        key: 'fds',
        value: '2048–4095',
        share_selected: 1,
        share_rest: 0,
        lift: 1,
        count_selected: 100,
        count_rest: 0,
      },
    ]);
  });

  it('compares nothing when either side is empty', () => {
    expect(selectionLifts([], [call(1, { a: 'x' })])).toEqual([]);
    expect(selectionLifts([call(1, { a: 'x' })], [])).toEqual([]);
  });
});
