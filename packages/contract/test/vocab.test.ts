import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import {
  OPS,
  OpSchema,
  VIEWS,
  ViewSchema,
  isOneOf,
  regressionAlertKey,
  sloAlertKey,
} from '../src/index.ts';

describe('vocabularies', () => {
  it('their schemas accept exactly the listed values', () => {
    for (const op of OPS) expect(Value.Check(OpSchema, op)).toBe(true);
    for (const view of VIEWS) expect(Value.Check(ViewSchema, view)).toBe(true);
    expect(Value.Check(OpSchema, 'server')).toBe(false);
    expect(Value.Check(ViewSchema, 'request')).toBe(false);
  });

  it('isOneOf narrows strings only', () => {
    expect(isOneOf(OPS, 'spawn')).toBe(true);
    expect(isOneOf(OPS, 'SPAWN')).toBe(false);
    expect(isOneOf(OPS, undefined)).toBe(false);
  });

  it('alert keys name their subject', () => {
    expect(sloAlertKey('7', 'page')).toBe('slo:7:page');
    expect(regressionAlertKey('42')).toBe('regression:42');
  });
});
