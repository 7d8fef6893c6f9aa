import { describe, expect, it } from 'vitest';
import {
  describeRange,
  refreshInterval,
  regressionWindow,
  resolveRange,
  zoomOut,
  zoomRange,
  fromLocalInput,
  toLocalInput,
} from './timeRange.ts';
import { applyPatch, linkWithGlobals } from './url.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('time ranges in the URL', () => {
  const now = T0;
  it('resolves relative and absolute ranges, and falls back on nonsense', () => {
    expect(resolveRange({ from: 'now-6h', to: 'now' }, now)).toEqual({
      fromMs: now - 6 * 3_600_000,
      toMs: now,
      valid: true,
    });
    expect(resolveRange({ from: iso(now - 1000), to: iso(now) }, now).valid).toBe(true);
    const bad = resolveRange({ from: 'yesterday', to: 'now' }, now);
    expect(bad.valid).toBe(false);
    expect(bad.toMs - bad.fromMs).toBe(6 * 3_600_000);
  });

  it('describes ranges the way people say them', () => {
    expect(describeRange({ from: 'now-24h', to: 'now' }, now)).toBe('Last 24 hours');
    expect(describeRange({ from: 'now-90m', to: 'now' }, now)).toBe('Last 90m');
  });

  it('zooms to absolute times and back out', () => {
    const z = zoomRange(now + 1500, now - 60_500);
    expect(Date.parse(z.from)).toBeLessThanOrEqual(now - 60_500);
    expect(Date.parse(z.to)).toBeGreaterThanOrEqual(now + 1500);
    const out = zoomOut({ fromMs: now - 3_600_000, toMs: now - 1_800_000 }, now);
    expect(Date.parse(out.to) - Date.parse(out.from)).toBe(3_600_000);
  });

  it('refreshes relative ranges by default, fixed ones only when asked', () => {
    expect(refreshInterval(null, { from: 'now-6h', to: 'now' })).toBe(60_000);
    expect(refreshInterval(null, { from: iso(now - 1), to: iso(now) })).toBe(false);
    expect(refreshInterval('10s', { from: iso(now - 1), to: iso(now) })).toBe(10_000);
    expect(refreshInterval('off', { from: 'now-6h', to: 'now' })).toBe(false);
  });

  it('opens a regression with more history before the onset than after, up to now', () => {
    const w = regressionWindow(now - 3_600_000, now);
    expect(w.to).toBe('now');
    expect(Date.parse(w.from)).toBe(now - 3 * 3_600_000);
    const old = regressionWindow(now - 10 * 86_400_000, now);
    expect(Date.parse(old.to) - Date.parse(old.from)).toBe(3 * 86_400_000);
  });

  it('round-trips datetime-local input', () => {
    const t = new Date(2026, 10, 20, 10, 43).getTime();
    expect(fromLocalInput(toLocalInput(t))).toBe(t);
    expect(Number.isNaN(fromLocalInput('nope'))).toBe(true);
  });

  it('patches URL params and carries the global ones across pages', () => {
    const p = new URLSearchParams('from=now-1h&series=3&scale=linear');
    expect(applyPatch(p, { series: null, host: 'a' }).toString()).toBe(
      'from=now-1h&scale=linear&host=a',
    );
    expect(linkWithGlobals('/deploys', p, { kind: 'kernel' })).toBe(
      '/deploys?from=now-1h&scale=linear&kind=kernel',
    );
  });
});

// The Explorer pickers' cases (narrowing, the one series, dropped later choices) run on the
// server over 5,000 series: apps/server/test/series-list.test.ts.

// Edge membership and relevant deploys are the server's: packages/core/test/edges.test.ts and
// apps/server/test/deploys-relevance.test.ts.
