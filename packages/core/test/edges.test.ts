/**
 * Edge views (moved from the web's edgeSeries/shapeEdge tests when the server
 * took over GET /api/v1/series/{id}/edge: same cases, now in core).
 */
import { describe, expect, it } from 'vitest';
import { edgeVerdict, findEdge, medianOf, summarizeView } from '../src/index.ts';

const s = (id: string, service: string, view: string, peer: string | null = null) => ({
  id,
  service,
  op: 'request',
  view,
  name: 'GET /lookup',
  peer,
});

describe('edge membership', () => {
  const all = [
    s('1', 'checkout', 'client', 'urlite'),
    s('2', 'checkout', 'server', 'urlite'),
    s('3', 'checkout', 'gap', 'urlite'),
    s('4', 'urlite', 'server'),
  ];

  it('finds client, server and gap of an edge from any of its views', () => {
    for (const from of [all[0]!, all[2]!, all[3]!]) {
      const e = findEdge(all, from);
      expect([e.client?.id, e.server?.id, e.gap?.id, e.caller, e.callee]).toEqual([
        '1',
        '2',
        '3',
        'checkout',
        'urlite',
      ]);
    }
  });

  it("falls back to the callee's own server series before pairing has run", () => {
    const e = findEdge([all[0]!, all[3]!], all[0]!);
    expect(e.server?.id).toBe('4');
    expect(e.gap).toBeNull();
  });

  it('treats an empty peer as none and ignores other names and ops', () => {
    const other = { ...s('9', 'checkout', 'gap', 'urlite'), name: 'POST /x' };
    const e = findEdge([...all, other], { ...s('5', 'batch', 'internal'), peer: '' });
    expect([e.caller, e.callee, e.client, e.server, e.gap]).toEqual([
      'batch',
      null,
      null,
      null,
      null,
    ]);
    expect(findEdge([other, all[3]!], all[0]!).gap).toBeNull();
  });
});

describe('edge summaries and verdict', () => {
  const T0 = Date.parse('2026-11-20T10:00:00Z');
  const t = (n: number) => Array.from({ length: n }, (_, i) => T0 + i * 60_000);

  it('tells that only callers see the change when the server stayed flat', () => {
    const onset = T0 + 3 * 60_000;
    const client = summarizeView(t(6), [1, 1, 1, 41, 41, 41], onset);
    expect([client.before_ms, client.after_ms]).toEqual([1, 41]);
    const summary = {
      client,
      server: summarizeView(t(6), [0.8, 0.8, 0.8, 0.8, 0.8, 0.8], onset),
      gap: summarizeView(t(6), [0.2, 0.2, 0.2, 40.2, 40.2, 40.2], onset),
    };
    expect(edgeVerdict(summary)).toMatch(/Only callers see it/);
  });

  it('blames the server when it got slower itself', () => {
    const onset = T0 + 2 * 60_000;
    const summary = {
      client: summarizeView(t(4), [1, 1, 21, 21], onset),
      server: summarizeView(t(4), [0.8, 0.8, 20.8, 20.8], onset),
    };
    expect(edgeVerdict(summary)).toMatch(/server itself/);
  });

  it('has nothing to say without an onset, and skips missing values', () => {
    const v = summarizeView(t(3), [2, null, 4]);
    expect(v).toEqual({ typical_ms: 3, before_ms: null, after_ms: null });
    expect(edgeVerdict({ client: v })).toBeNull();
  });

  it('takes medians', () => {
    expect(medianOf([3, 1, 2])).toBe(2);
    expect(medianOf([4, 1, 2, 3])).toBe(2.5);
    expect(medianOf([])).toBeNull();
  });
});
