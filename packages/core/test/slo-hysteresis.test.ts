import { describe, expect, it } from 'vitest';
import { sloAlertQuietMs, sloAlertResolves } from '../src/index.ts';

const MIN = 60_000;

describe('SLO alert hysteresis', () => {
  it('waits for the short window of the tier that fired last', () => {
    expect(sloAlertQuietMs('5m')).toBe(5 * MIN);
    expect(sloAlertQuietMs('30m')).toBe(30 * MIN);
    expect(sloAlertQuietMs('2h')).toBe(120 * MIN);
    expect(sloAlertQuietMs('6h')).toBe(360 * MIN);
  });

  it('an unknown or missing window falls back to the shortest (5 m)', () => {
    expect(sloAlertQuietMs(null)).toBe(5 * MIN);
    expect(sloAlertQuietMs('7w')).toBe(5 * MIN);
  });

  it('resolves only once quiet for the whole window', () => {
    const last = 1_000_000;
    expect(sloAlertResolves({ lastBurningMs: last, shortWindow: '5m', now: last + 4 * MIN })).toBe(
      false,
    );
    expect(sloAlertResolves({ lastBurningMs: last, shortWindow: '5m', now: last + 5 * MIN })).toBe(
      true,
    );
    expect(
      sloAlertResolves({ lastBurningMs: last, shortWindow: '30m', now: last + 29 * MIN }),
    ).toBe(false);
  });
});
