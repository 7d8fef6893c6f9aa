/**
 * The delayed-ACK hint on a share of calls (hints.ts `ackOnShare`): a
 * caller whose p99 settled onto a band (a `floor` regression) while the
 * median stayed. Built by hand: the callee's time, the caller's own stalls
 * on 3 % of calls, and after the change 8 % of calls waiting 40–44 ms on the
 * caller's side (or, in the control, on the callee's).
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '@onset/testkit/random';
import { detectHints, type EvidenceSample } from '../src/index.ts';

function lognormal(rand: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-12, rand());
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand()));
}

/** n calls; `wait` of the share `ack` lands on the caller's side (or the callee's). */
function calls(r: () => number, n: number, ack: number, onCallee = false): EvidenceSample[] {
  return Array.from({ length: n }, () => {
    let server = r() < 0.05 ? 8 + 12 * r() : 1 + 2 * r();
    let ms = server + 0.2;
    if (r() < 0.03) ms += lognormal(r, 40, 0.6); // the caller's own stalls
    if (r() < ack) {
      const wait = 40 + 4 * r();
      if (onCallee) server += wait;
      ms += wait;
    }
    return { ms, calleeMs: server, attrs: {} };
  });
}

describe('delayed ACK on a share of calls', () => {
  it('8 % of calls waiting ≈40 ms on the caller’s side, median unmoved: tcp-delayed-ack', () => {
    const r = mulberry32(7);
    const hints = detectHints({
      op: 'request',
      view: 'client',
      before: calls(r, 600, 0),
      after: calls(r, 600, 0.08),
    });
    expect(hints.map((h) => h.id)).toEqual(['tcp-delayed-ack']);
    expect(hints[0]!.detail).toMatch(/A share of calls now waits ≈40 ms more/);
    expect(hints[0]!.detail).toMatch(/caller-only/);
    expect(hints[0]!.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it('no change, or the same waits inside the callee: no hint', () => {
    const r = mulberry32(8);
    expect(
      detectHints({
        op: 'request',
        view: 'client',
        before: calls(r, 600, 0),
        after: calls(r, 600, 0),
      }),
    ).toEqual([]);
    expect(
      detectHints({
        op: 'request',
        view: 'client',
        before: calls(r, 600, 0),
        after: calls(r, 600, 0.08, true),
      }),
    ).toEqual([]);
  });
});
