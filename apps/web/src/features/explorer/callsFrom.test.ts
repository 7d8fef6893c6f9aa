import { describe, expect, it } from 'vitest';
import { callsFromText } from './callsFrom.ts';
import { seriesOf } from '../../../test/fixtures.ts';

describe('what a series counts its calls from', () => {
  it('names the source the server reports', () => {
    expect(callsFromText(seriesOf({ calls_from: 'metrics' }))).toMatch(/OTLP histogram metrics/);
    expect(callsFromText(seriesOf({ calls_from: 'paired_spans' }))).toMatch(
      /paired client and server/,
    );
    expect(callsFromText(seriesOf({ calls_from: 'spans' }))).toBe('Calls counted from spans.');
    expect(callsFromText(seriesOf({ calls_from: 'spans', metrics_not_counted: true }))).toMatch(
      /metrics of the same calls are not added/,
    );
  });
});
