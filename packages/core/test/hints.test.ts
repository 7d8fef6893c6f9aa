/**
 * Hints and attribute lifts on synthetic calls whose mechanism is built in
 * by hand (a constant +40 ms, a ×3 multiplier, a per-fd cost), so each
 * expectation follows from how the data was made, not from the code.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '@onset/testkit/random';
import { HINT_ATTRS } from '@onset/contract';
import {
  attributeLifts,
  detectHints,
  liftValue,
  spearman,
  type EvidenceSample,
} from '../src/index.ts';

function lognormal(rand: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-12, rand());
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand()));
}

const calls = (n: number, f: (i: number) => EvidenceSample) =>
  Array.from({ length: n }, (_, i) => f(i));

describe('network hints', () => {
  it('a flat +40 ms the callee does not see is tcp-delayed-ack, not tcp-min-rto', () => {
    const r = mulberry32(1);
    const call = (extra: number) => (): EvidenceSample => {
      const server = 0.7 + r() * 0.25;
      return { ms: server + 0.2 + extra + r() * 0.8, calleeMs: server, attrs: {} };
    };
    const hints = detectHints({
      op: 'request',
      view: 'client',
      before: calls(300, call(0)),
      after: calls(300, call(39.6)),
    });
    expect(hints.map((h) => h.id)).toEqual(['tcp-delayed-ack']);
    expect(hints[0]!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(hints[0]!.detail).toMatch(/p50 \+39\.\d ms/);
    expect(hints[0]!.detail).toMatch(/caller-only/);
  });

  it('the same step that the callee also sees is not a TCP hint', () => {
    const r = mulberry32(2);
    const call = (extra: number) => (): EvidenceSample => {
      const server = 1 + extra + r();
      return { ms: server + 0.3, calleeMs: server, attrs: {} };
    };
    expect(
      detectHints({
        op: 'request',
        view: 'client',
        before: calls(300, call(0)),
        after: calls(300, call(40)),
      }),
    ).toEqual([]);
  });

  it('a ×3 slowdown whose median moved by 40 ms is not flat, so no TCP hint', () => {
    const r = mulberry32(3);
    const hints = detectHints({
      op: 'request',
      view: 'client',
      before: calls(400, () => ({ ms: lognormal(r, 20, 0.4), attrs: {} })),
      after: calls(400, () => ({ ms: lognormal(r, 60, 0.4), attrs: {} })),
    });
    expect(hints.filter((h) => h.id.startsWith('tcp-'))).toEqual([]);
  });

  it('a server-view step is never a network hint', () => {
    const r = mulberry32(4);
    const hints = detectHints({
      op: 'request',
      view: 'server',
      before: calls(300, () => ({ ms: 1 + r(), attrs: {} })),
      after: calls(300, () => ({ ms: 41 + r(), attrs: {} })),
    });
    expect(hints).toEqual([]);
  });

  it('+200 ms on 5% of calls (the tail) is tcp-min-rto', () => {
    const r = mulberry32(5);
    const hints = detectHints({
      op: 'request',
      view: 'gap',
      before: calls(2000, () => ({ ms: 0.3 + r() * 0.2, attrs: {} })),
      after: calls(2000, () => ({ ms: 0.3 + r() * 0.2 + (r() < 0.05 ? 200 : 0), attrs: {} })),
    });
    expect(hints.map((h) => h.id)).toEqual(['tcp-min-rto']);
    expect(hints[0]!.detail).toMatch(/p99/);
  });

  it('too few calls: no hint at all', () => {
    const few = calls(5, () => ({ ms: 1, attrs: {} }));
    expect(
      detectHints({
        op: 'request',
        view: 'gap',
        before: few,
        after: few.map((x) => ({ ...x, ms: 41 })),
      }),
    ).toEqual([]);
  });
});

describe('correlation hints', () => {
  it('spawn time that grows 2 µs per inherited fd is spawn-fd-count', () => {
    const r = mulberry32(6);
    const spawn = (lo: number, hi: number) => (): EvidenceSample => {
      const fds = Math.round(lo + r() * (hi - lo));
      return {
        ms: 0.3 + fds * 0.002 * (0.9 + r() * 0.2),
        attrs: { [HINT_ATTRS.parentOpenFds]: fds },
      };
    };
    const hints = detectHints({
      op: 'spawn',
      view: 'internal',
      before: calls(200, spawn(40, 90)),
      after: calls(200, spawn(2500, 4000)),
    });
    expect(hints[0]!.id).toBe('spawn-fd-count');
    expect(hints[0]!.confidence).toBeGreaterThan(0.8);
    expect(hints[0]!.detail).toMatch(/ρ = 0\.9\d/);
  });

  it('a spawn step unrelated to the fd count is not spawn-fd-count', () => {
    const r = mulberry32(7);
    const spawn = (ms: number) => (): EvidenceSample => ({
      ms: ms * (0.8 + r() * 0.4),
      attrs: { [HINT_ATTRS.parentOpenFds]: Math.round(40 + r() * 50) },
    });
    expect(
      detectHints({
        op: 'spawn',
        view: 'internal',
        before: calls(200, spawn(0.4)),
        after: calls(200, spawn(8)),
      }),
    ).toEqual([]);
  });

  it('unmount time that follows dirty bytes is unmount-dirty-bytes', () => {
    const r = mulberry32(8);
    const unmount = (maxDirty: number) => (): EvidenceSample => {
      const dirty = r() * maxDirty;
      return {
        ms: 10 + dirty / 50e6,
        attrs: { [HINT_ATTRS.dirtyBytes]: dirty, [HINT_ATTRS.writebackBytes]: 0 },
      };
    };
    const hints = detectHints({
      op: 'unmount',
      view: 'internal',
      before: calls(100, unmount(1e6)),
      after: calls(100, unmount(4e11)),
    });
    expect(hints.map((h) => h.id)).toEqual(['unmount-dirty-bytes']);
  });

  it('an fsync step of exactly ×3 without counts is a low-confidence fsync-per-operation', () => {
    const r = mulberry32(9);
    const hints = detectHints({
      op: 'fsync',
      view: 'internal',
      before: calls(100, () => ({ ms: lognormal(r, 810, 0.08), attrs: {} })),
      after: calls(100, () => ({ ms: 3 * lognormal(r, 810, 0.08), attrs: {} })),
    });
    expect(hints.map((h) => h.id)).toEqual(['fsync-per-operation']);
    expect(hints[0]!.confidence).toBeLessThan(0.5);
  });
});

describe('fsync-per-operation from the operation’s fsync count', () => {
  // One removal pass of 40 files: 1 directory fsync of ~8 ms (batch), or 40 of ~2 ms plus 40
  // unlinks of ~0.3 ms (fsync after every unlink), as the agent's fsync-burst spans record it.
  const pass = (r: () => number, each: boolean): EvidenceSample => {
    const fsyncs = each ? 40 : 1;
    let totalNs = 0;
    for (let i = 0; i < fsyncs; i++) totalNs += lognormal(r, each ? 2 : 8, 0.3) * 1e6;
    const unlinkMs = 40 * 0.3 * (0.8 + 0.4 * r());
    return {
      ms: totalNs / 1e6 + unlinkMs,
      attrs: { [HINT_ATTRS.fsyncCount]: fsyncs, [HINT_ATTRS.fsyncTotalNs]: Math.round(totalNs) },
    };
  };

  it('a count that multiplied (1 → 40) is a high-confidence hint naming the factor and the cheaper fsyncs', () => {
    const r = mulberry32(21);
    const hints = detectHints({
      op: 'fsync',
      view: 'internal',
      before: calls(60, () => pass(r, false)),
      after: calls(60, () => pass(r, true)),
    });
    expect(hints.map((h) => h.id)).toEqual(['fsync-per-operation']);
    expect(hints[0]!.confidence).toBeGreaterThanOrEqual(0.85);
    expect(hints[0]!.detail).toMatch(/×40 as many fsyncs/);
    expect(hints[0]!.detail).toMatch(/median 1 → 40 per operation/);
    // Each fsync got cheaper (≈8 → ≈2 ms): the hint says so, since the per-call view hides the step.
    expect(hints[0]!.detail).toMatch(/Time per fsync .*median \d+\.\d+ → [0-3]\.\d+ ms, no slower/);
  });

  it('the same step without counts is only the 0.4 whole-multiple guess, or nothing', () => {
    const r = mulberry32(21);
    const strip = (x: EvidenceSample): EvidenceSample => ({ ms: x.ms, attrs: {} });
    const hints = detectHints({
      op: 'fsync',
      view: 'internal',
      before: calls(60, () => strip(pass(r, false))),
      after: calls(60, () => strip(pass(r, true))),
    });
    for (const h of hints) expect(h.confidence).toBeLessThanOrEqual(0.4);
  });

  it('counts recorded and unchanged: slower fsyncs are not more fsyncs per operation', () => {
    const r = mulberry32(22);
    const op = (slow: number) => (): EvidenceSample => {
      const ms = slow * lognormal(r, 8, 0.05);
      return { ms, attrs: { [HINT_ATTRS.fsyncCount]: 1, [HINT_ATTRS.fsyncTotalNs]: ms * 1e6 } };
    };
    // An exact ×3 that the whole-multiple guess would otherwise take for 3 fsyncs.
    const hints = detectHints({
      op: 'fsync',
      view: 'internal',
      before: calls(60, op(1)),
      after: calls(60, op(3)),
    });
    expect(hints.map((h) => h.id)).not.toContain('fsync-per-operation');
  });

  it('on a rate series, calls per second that multiplied is a moderate hint pointing at the operations', () => {
    const r = mulberry32(24);
    // A minute per sample: 6 passes a minute, 1 fsync of ≈8 ms each, then 60 of ≈2 ms each.
    const minute = (each: boolean) => (): EvidenceSample => {
      const calls = each ? 360 : 6;
      let totalNs = 0;
      for (let i = 0; i < calls; i++) totalNs += lognormal(r, each ? 2 : 8, 0.3) * 1e6;
      return {
        ms: totalNs / 1e6 / 60,
        attrs: {
          [HINT_ATTRS.fsyncCalls]: calls,
          [HINT_ATTRS.fsyncCallsPerS]: calls / 60,
          [HINT_ATTRS.fsyncTotalNs]: totalNs,
        },
      };
    };
    const hints = detectHints({
      op: 'fsync',
      view: 'internal',
      before: calls(40, minute(false)),
      after: calls(40, minute(true)),
    });
    expect(hints.map((h) => h.id)).toEqual(['fsync-per-operation']);
    expect(hints[0]!.confidence).toBe(0.6);
    expect(hints[0]!.detail).toMatch(/fsync calls per second went ×60/);
    expect(hints[0]!.detail).toMatch(/fsync-burst series/);
  });

  it('more fsyncs per operation while operations got faster explain no regression', () => {
    const r = mulberry32(23);
    const op = (n: number, ms: number) => (): EvidenceSample => ({
      ms: lognormal(r, ms, 0.1),
      attrs: { [HINT_ATTRS.fsyncCount]: n },
    });
    const hints = detectHints({
      op: 'fsync',
      view: 'internal',
      before: calls(60, op(1, 30)),
      after: calls(60, op(4, 10)),
    });
    expect(hints.map((h) => h.id)).not.toContain('fsync-per-operation');
  });
});

describe('attribute lifts', () => {
  it('ranks the value that only the slow calls after the onset carry first', () => {
    const r = mulberry32(10);
    const before = calls(400, (i) => ({
      ms: 14 + r() * 12,
      attrs: {
        'host.name': `node-${(i % 4) + 1}`,
        'os.version': '4.4.0-138',
        'fs.type': 'overlay',
      },
    }));
    const after = calls(400, (i) => {
      const host = `node-${(i % 4) + 1}`;
      const bumped = host === 'node-3' || host === 'node-4';
      return {
        ms: bumped ? 8000 + r() * 2000 : 14 + r() * 12,
        attrs: {
          'host.name': host,
          'os.version': bumped ? '4.15.0-36' : '4.4.0-138',
          'fs.type': 'overlay',
        },
      };
    });
    const lifts = attributeLifts(before, after);
    expect(lifts[0]).toMatchObject({ key: 'os.version', value: '4.15.0-36', share_before: 0 });
    expect(lifts[0]!.share_after).toBeGreaterThan(0.8);
    expect(lifts.find((l) => l.key === 'fs.type')).toBeUndefined();
  });

  it('buckets numbers by powers of two', () => {
    expect(liftValue(3000)).toBe('2048–4095');
    expect(liftValue(64)).toBe('64–127');
    expect(liftValue(0)).toBe('0');
    expect(liftValue('fork')).toBe('fork');
  });

  it('spearman sees a monotone relation and its absence', () => {
    expect(spearman([1, 2, 3, 4], [1, 4, 9, 16])).toBeCloseTo(1);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBeCloseTo(-1);
    expect(Number.isNaN(spearman([1, 1, 1], [1, 2, 3]))).toBe(true);
  });
});
