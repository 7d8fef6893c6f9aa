import { describe, expect, it } from 'vitest';
import { stackChips, toMarkers, versionText, deployTitle, suspectHostsText } from './markerData.ts';
import type { Deploy } from '@onset/contract';
import { deployOf } from '../../../test/fixtures.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('deploy markers', () => {
  const d = (id: string, atMs: number, extra: Partial<Deploy> = {}): Deploy =>
    deployOf({ id, kind: 'code', at: iso(atMs), ...extra });

  it('keeps markers in range and flags the ranked suspects', () => {
    const ms = toMarkers(
      [
        d('1', T0 - 1),
        d('2', T0 + 10, {
          kind: 'dependency',
          component: 'hyper',
          from_version: '0.12.35',
          to_version: '0.13.1',
        }),
        d('3', T0 + 20),
      ],
      { fromMs: T0, toMs: T0 + 100 },
      [
        { deploy_id: '2', reason: 'only version change on the callee before the onset' },
        { deploy_id: '3' },
      ],
    );
    expect(ms.map((m) => m.id)).toEqual(['3', '2']); // the top suspect last, drawn on top
    const top = ms.find((m) => m.id === '2')!;
    expect(top.suspectRank).toBe(1);
    expect(top.reason).toMatch(/callee/);
    expect(top.label).toBe('dependency hyper 0.12.35 → 0.13.1');
    expect(ms.find((m) => m.id === '3')!.suspectRank).toBe(2);
  });

  it("draws one suspect's rollout as one chip listing only the hosts of this series", () => {
    const k = { kind: 'kernel', to_version: '4.15' } as const;
    const ms = toMarkers(
      [
        d('5', T0 + 10, { ...k, hosts: ['node-3', 'node-4'] }),
        d('6', T0 + 20, { ...k, hosts: ['node-3', 'node-4', 'db-1', 'db-2'], source: 'inferred' }),
        d('7', T0 + 30, { hosts: ['db-1'] }),
      ],
      { fromMs: T0, toMs: T0 + 100 },
      [
        {
          deploy_id: '5',
          deploy_ids: ['5', '6'],
          hosts: ['node-3', 'node-4', 'db-1', 'db-2'],
          series_hosts: 2,
        },
      ],
    );
    expect(ms.map((m) => m.id)).toEqual(['7', '5']);
    expect(ms[1]!.title).toBe('kernel 4.15 (node-3, node-4 and 2 other hosts of other services)');
    expect(ms[0]!.title).toBe('code (db-1)');
    expect(suspectHostsText({ hosts: ['x', 'y'], series_hosts: 0 })).toBe(
      '2 hosts of other services',
    );
    expect(suspectHostsText({ hosts: ['a', 'x'] })).toBe('a, x');
  });

  it('describes versions and where a change happened', () => {
    expect(
      versionText({ component: 'linux', from_version: '4.4.0-138', to_version: '4.15.0-36' }),
    ).toBe('linux 4.4.0-138 → 4.15.0-36');
    expect(versionText({ commit: '9f2c1e0aaaaaaaaaaaaa' })).toBe('9f2c1e0aaaaa');
    expect(
      deployTitle(d('1', T0, { kind: 'kernel', hosts: ['a', 'b', 'c', 'd'], to_version: '4.15' })),
    ).toBe('kernel 4.15 (a, b, c +1 more)');
  });

  it('stacks overlapping chips in rows', () => {
    expect(stackChips([10, 12, 100, 14], 18)).toEqual([0, 1, 0, 2]);
  });
});
