import { afterEach, describe, expect, it } from 'vitest';
import { summarizeHeatmap, summarizeLines } from '../src/components/graphs/chartSummary.ts';
import { setTimeZoneMode } from '../src/lib/time.ts';

const T0 = Date.UTC(2026, 10, 20, 10, 0) / 1000;

describe('chart text summaries for screen readers', () => {
  afterEach(() => setTimeZoneMode('local'));

  it('names each line with its first, last, lowest and highest value', () => {
    setTimeZoneMode('utc');
    const text = summarizeLines(
      [T0, T0 + 60, T0 + 120],
      [
        { label: 'p50', values: [20, null, 9900] },
        { label: 'p99', values: [null, null, null] },
      ],
    );
    expect(text).toBe(
      'From Nov 20, 10:00 UTC to Nov 20, 10:02 UTC. p50: first 20.0 ms, last 9.90 s, lowest 20.0 ms, highest 9.90 s. p99: no data.',
    );
    expect(summarizeLines([], [])).toBe('No data in this range.');
  });

  it('says how many calls a heatmap holds and where most fell', () => {
    setTimeZoneMode('utc');
    const frame = {
      x: [T0, T0 + 60],
      stepMs: 60_000,
      rows: [
        { loMs: 1, hiMs: 2 },
        { loMs: 2, hiMs: 4 },
      ],
      counts: new Float64Array([1, 5, 2, 7]),
      maxCount: 7,
      total: 15,
      nonPositive: 0,
    };
    expect(summarizeHeatmap(frame)).toBe(
      '15 calls from Nov 20, 10:00 UTC to Nov 20, 10:01 UTC; most (12) took 2.00 ms to 4.00 ms.',
    );
  });
});
