import { describe, expect, it } from 'vitest';
import { parseDuration, parseTime, resolveTime, TimeSyntaxError } from '../src/index.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');

describe('time grammar', () => {
  it('parses durations and rejects anything else', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration(' 1.5h ')).toBe(5_400_000);
    expect(parseDuration('28d')).toBe(28 * 86_400_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(() => parseDuration('6 hours')).toThrow(/invalid duration/);
    expect(() => parseDuration('-1h')).toThrow(/invalid duration/);
  });

  it('reads now, now-<duration>, epoch ms and RFC 3339', () => {
    expect(parseTime('now', NOW)).toBe(NOW);
    expect(parseTime(' now-6h ', NOW)).toBe(NOW - 6 * 3_600_000);
    expect(parseTime('1763640000000', NOW)).toBe(1763640000000);
    expect(parseTime('2026-11-20T10:00:00+01:00', NOW)).toBe(Date.parse('2026-11-20T09:00:00Z'));
  });

  it('says which part was wrong, and resolveTime turns that into NaN', () => {
    expect(() => parseTime('now-6x', NOW)).toThrow(TimeSyntaxError);
    expect(() => parseTime('now-6x', NOW)).toThrow('invalid relative time "now-6x"');
    expect(() => parseTime('yesterday', NOW)).toThrow('"yesterday" is not an RFC 3339 time');
    expect(resolveTime('now-6x', NOW)).toBeNaN();
    expect(resolveTime('yesterday', NOW)).toBeNaN();
    expect(resolveTime('now-1d', NOW)).toBe(NOW - 86_400_000);
  });
});
