import { describe, expect, it } from 'vitest';
import type { QuantilesColumns, Series, View } from '@onset/contract';
import { columnsOf } from '../../../test/columns.ts';
import { seriesOf } from '../../../test/fixtures.ts';
import { shapeCohorts, splitCandidates } from './cohortData.ts';

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
