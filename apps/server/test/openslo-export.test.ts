/**
 * GET /api/v1/slos/{id}/openslo must be YAML any parser reads: schemathesis
 * found an export (an SLO name holding U+0088) that PyYAML refused, because
 * the yaml library writes C1 control characters raw.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toOpenSlo } from '../src/slos/openslo.ts';
import type { SloJson } from '../src/slos/store.ts';

const slo = (name: string, labels: Record<string, string> = {}) =>
  ({
    id: '1',
    name,
    description: null,
    service: 'checkout',
    op: null,
    view: null,
    name_match: null,
    peer: null,
    series_id: null,
    threshold_ms: 100,
    objective: 0.99,
    window: '28d',
    calendar: false,
    time_zone: 'UTC',
    labels,
  }) as unknown as SloJson;

/** The characters YAML 1.2 allows raw (its printable set). */
const printable = /^[\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;

describe('OpenSLO export', () => {
  it('escapes characters YAML does not allow raw, and reads back the same text', () => {
    const name = 'p99 \u0088 \u0001 \u007f \u009f \ufffe "quoted" \\ end';
    const labels = { 'team\u0090': 'db\u0085\u0099' };
    const text = toOpenSlo(slo(name, labels));
    expect(text).toMatch(printable);
    const back = parse(text) as { metadata: { displayName: string; labels: unknown } };
    expect(back.metadata.displayName).toBe(name);
    expect(back.metadata.labels).toEqual(labels);
  });

  it('keeps ordinary names plain', () => {
    const text = toOpenSlo(slo('checkout p99'));
    expect(text).toContain('displayName: checkout p99\n');
  });
});
