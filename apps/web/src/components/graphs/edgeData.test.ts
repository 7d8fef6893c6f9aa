import { describe, expect, it } from 'vitest';
import { edgeFrame } from './edgeData.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');

describe('edge views', () => {
  // Which series are the views, their medians and the verdict are the server's (core edges.test.ts).
  const view = (v: 'client' | 'server' | 'gap', values: number[] | null) => ({
    view: v,
    series: null,
    columns: values
      ? {
          t: values.map((_, i) => T0 + i * 60_000),
          count: values.map(() => 1),
          q: { '0.5': values },
        }
      : null,
    summary: {},
  });

  it('lines up the reported views of the server answer on one time axis', () => {
    const frame = edgeFrame(
      {
        series_id: '1',
        caller: 'checkout',
        callee: 'urlite',
        from: new Date(T0).toISOString(),
        to: new Date(T0 + 3 * 60_000).toISOString(),
        step_ms: 60_000,
        views: [view('client', [1, 41, 41]), view('server', null), view('gap', [0.2, 40.2, 40.2])],
        verdict: {},
      },
      '0.5',
    );
    expect(frame.lines.map((l) => [l.key, l.dash ?? false])).toEqual([
      ['client', false],
      ['gap', false],
    ]);
    expect(frame.lines[0]!.values).toEqual([1, 41, 41]);
  });
});
