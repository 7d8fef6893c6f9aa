import { describe, expect, it } from 'vitest';
import type { Deploy } from '@onset/contract';
import { deployOf } from '../../../test/fixtures.ts';
import { filterDeploys, timelineLanes, HOST_LANE } from './timelineData.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

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
