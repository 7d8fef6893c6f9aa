import { afterEach, describe, expect, it } from 'vitest';
import { latencyTickLabels } from '../src/components/graphs/latencyAxis.ts';
import { setTimeZoneMode, timeAxisLabels } from '../src/lib/time.ts';

const MIN = 60_000;
const AT = Date.UTC(2026, 11, 2, 23, 30);

describe('latency tick labels', () => {
  it('leaves blank the ticks uPlot does not label on a short log axis', () => {
    // uPlot's log-axis filter hands null for the 2 and 5 ticks it has no room for.
    expect(latencyTickLabels([10, null, null, 100, null, null, 1000])).toEqual([
      '10 ms',
      '',
      '',
      '100 ms',
      '',
      '',
      '1 s',
    ]);
  });
});

describe('time axis labels', () => {
  afterEach(() => setTimeZoneMode('local'));

  it('are 24-hour, with the date and the zone under the first tick and the date at a new day', () => {
    const ticks = [0, 15, 30, 45].map((m) => AT + m * MIN);
    expect(timeAxisLabels(ticks, 15 * MIN, 'utc')).toEqual([
      '23:30\nDec 2 UTC',
      '23:45',
      '00:00\nDec 3',
      '00:15',
    ]);
  });

  it('show seconds when ticks are under a minute apart, dates when a day or more', () => {
    expect(timeAxisLabels([AT, AT + 30_000], 30_000, 'utc')).toEqual([
      '23:30:00\nDec 2 UTC',
      '23:30:30',
    ]);
    expect(timeAxisLabels([AT, AT + 1440 * MIN], 1440 * MIN, 'utc')).toEqual([
      'Dec 2 UTC',
      'Dec 3',
    ]);
  });

  it('follow the toggle by default and never print a 12-hour clock', () => {
    setTimeZoneMode('utc');
    expect(timeAxisLabels([AT], MIN)[0]).toBe('23:30\nDec 2 UTC');
    setTimeZoneMode('local');
    const local = timeAxisLabels([AT + 13 * 60 * MIN], MIN)[0]!;
    expect(local).toMatch(/^\d\d:\d\d\n[A-Z][a-z]{2} \d+ \S+/);
    expect(local).not.toMatch(/am|pm/i);
    expect(timeAxisLabels([null, AT], MIN, 'utc')).toEqual(['', '23:30\nDec 2 UTC']);
  });
});
