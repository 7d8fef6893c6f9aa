import { afterEach, describe, expect, it } from 'vitest';
import { formatClock, formatInstant, setTimeZoneMode, timeZoneMode } from '../src/lib/time.ts';
import { fromLocalInput, toLocalInput } from '../src/state/timeRange.ts';

const AT = Date.UTC(2026, 10, 20, 9, 5, 7);

describe('one time format, zone always shown', () => {
  afterEach(() => setTimeZoneMode('local'));

  it('prints 24-hour UTC with the zone when the toggle says UTC', () => {
    setTimeZoneMode('utc');
    expect(timeZoneMode()).toBe('utc');
    expect(formatInstant(AT)).toBe('Nov 20, 09:05 UTC');
    expect(formatInstant(AT, true)).toBe('Nov 20, 09:05:07 UTC');
    expect(formatClock(AT)).toBe('09:05:07 UTC');
  });

  it('names the local zone too, and never prints AM/PM', () => {
    setTimeZoneMode('local');
    const text = formatInstant(Date.UTC(2026, 10, 20, 15, 30));
    expect(text).toMatch(/^Nov 2[01], \d\d:\d\d \S+/);
    expect(text).not.toMatch(/AM|PM/);
  });

  it('reads and writes custom-range inputs in the zone shown', () => {
    setTimeZoneMode('utc');
    expect(toLocalInput(AT)).toBe('2026-11-20T09:05');
    expect(fromLocalInput('2026-11-20T09:05')).toBe(Date.UTC(2026, 10, 20, 9, 5));
    setTimeZoneMode('local');
    expect(fromLocalInput(toLocalInput(AT))).toBe(Date.UTC(2026, 10, 20, 9, 5));
  });
});
