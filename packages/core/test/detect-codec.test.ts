import { describe, expect, it } from 'vitest';
import { StepDetector, decodeState, encodeState, type MinutePoint } from '../src/index.ts';

/** A day of minutes with a 3× step in the afternoon: long enough to fill the long p50 history. */
function points(): MinutePoint[] {
  const out: MinutePoint[] = [];
  let x = 12345;
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) + 0.5) / 2 ** 31;
  for (let i = 0; i < 1440; i++) {
    const level = (i >= 900 ? 3 : 1) * 20 * Math.exp(0.3 * (next() - 0.5));
    out.push({
      t: Date.UTC(2026, 0, 1) + i * 60_000,
      count: 5 + (i % 7),
      p50: level,
      p99: level * 4,
    });
  }
  return out;
}

describe('detector state encoding', () => {
  it('round-trips exactly, long p50 history included, in about two thirds of the JSON', () => {
    const all = points();
    const d = new StepDetector();
    d.pushAll(all.slice(0, 1200));
    const state = d.toJSON();
    expect(state.long!.t.length).toBeGreaterThan(400);
    const buf = encodeState(state);
    expect(decodeState(buf)).toEqual(state);
    expect(buf.length).toBeLessThan(JSON.stringify(state).length * 0.7);
    // A restored detector continues exactly like the one that kept running.
    const restored = StepDetector.fromJSON(decodeState(buf));
    expect(restored.pushAll(all.slice(1200))).toEqual(d.pushAll(all.slice(1200)));
    expect(restored.toJSON()).toEqual(d.toJSON());
  });

  it('still reads states written before the long history (version 1)', () => {
    const d = new StepDetector();
    d.pushAll(points().slice(0, 300));
    const { long: _long, ...v1State } = d.toJSON();
    // Version 1 kept counts and log values as doubles: a fractional count and
    // an unrounded value make version 3 choose doubles too, and without the
    // long-history section (its empty length) the bytes are version 1's.
    v1State.ring.c[0] = 5.5;
    v1State.ring.y50[0] = 0.123456789;
    const v3 = encodeState(v1State);
    expect(v3[2]! & 12).toBe(0);
    const v1 = v3.slice(0, v3.length - 4);
    v1[1] = 1;
    const back = decodeState(v1);
    expect(back).toEqual(v1State);
    expect(() => StepDetector.fromJSON(back)).not.toThrow();
    v1[1] = 9;
    expect(() => decodeState(v1)).toThrow(/unsupported/);
  });

  it('reads bytes that sit at an offset inside a larger buffer (as a pooled Node Buffer does)', () => {
    const d = new StepDetector();
    d.pushAll(points().slice(0, 500));
    const bytes = d.encode();
    const host = new Uint8Array(bytes.length + 13);
    host.set(bytes, 13);
    const restored = StepDetector.decode(host.subarray(13));
    expect(restored.toJSON()).toEqual(d.toJSON());
    expect(Buffer.from(bytes).equals(Buffer.from(encodeState(d.toJSON())))).toBe(true);
  });
});

describe('recentPoints', () => {
  it('gives the ring back in the input unit, oldest first, without reading the state', () => {
    const all = points();
    const d = new StepDetector({ floor: 0.5 });
    d.pushAll(all.slice(0, 1000));
    const recent = d.recentPoints();
    const { ring } = d.toJSON();
    expect(recent.length).toBe(ring.t.length);
    expect(recent.length).toBe(244);
    const tail = all.slice(1000 - recent.length, 1000);
    recent.forEach((p, i) => {
      expect(p.t).toBe(tail[i]!.t);
      expect(p.count).toBe(tail[i]!.count);
      // The ring keeps log values rounded to 1e-6.
      expect(p.p50).toBeCloseTo(tail[i]!.p50, 3);
      expect(p.p99).toBeCloseTo(tail[i]!.p99, 3);
    });
    expect(new StepDetector().recentPoints()).toEqual([]);
  });
});
