/**
 * The recorded SDK bodies (e2e/fixtures/sdk, README.md there) are what their
 * manifests say, and the test-time relay's shifters move every time in them:
 * spans by one shift per trace, metric points each to their own test time.
 */
import { describe, expect, it } from 'vitest';
import { shiftMetricTimes, shiftSpanTimes } from '../apps/agent/test/live/helpers/test-time.ts';
import { decodeBody, loadBodies, loadManifest, SDKS } from './fixtures/sdk/index.ts';

type Any = Record<string, any>;

/** Every (start, time) pair of a metrics body's data points, in order, as strings of ns. */
function metricTimes(msg: Any): string[] {
  const out: string[] = [];
  for (const r of msg.resourceMetrics ?? [])
    for (const s of r.scopeMetrics ?? [])
      for (const m of s.metrics ?? []) {
        const data = m.gauge ?? m.sum ?? m.histogram ?? m.exponentialHistogram ?? m.summary;
        for (const p of data?.dataPoints ?? [])
          out.push(`${String(p.startTimeUnixNano ?? 0)}/${String(p.timeUnixNano)}`);
      }
  return out;
}

function spanTimes(msg: Any): { trace: string; start: bigint; end: bigint }[] {
  const out: { trace: string; start: bigint; end: bigint }[] = [];
  for (const r of msg.resourceSpans ?? [])
    for (const s of r.scopeSpans ?? [])
      for (const sp of s.spans ?? [])
        out.push({
          trace: Buffer.from(sp.traceId as Uint8Array).toString('hex'),
          start: BigInt(String(sp.startTimeUnixNano)),
          end: BigInt(String(sp.endTimeUnixNano)),
        });
  return out;
}

describe('recorded SDK fixtures', () => {
  it('each SDK sent traces whose span counts are the manifest’s, from the service it names', () => {
    for (const sdk of SDKS) {
      const m = loadManifest(sdk);
      const traces = loadBodies(sdk).filter((b) => b.signal === 'traces');
      expect(traces.length, `${sdk}: trace bodies`).toBeGreaterThan(0);
      let spans = 0;
      for (const b of traces) {
        const msg = decodeBody('traces', b.body);
        const n = spanTimes(msg).length;
        expect(n, `${sdk} ${b.file}`).toBe(b.items);
        spans += n;
        for (const r of msg.resourceSpans)
          expect(
            r.resource.attributes.find((a: Any) => a.key === 'service.name').value.stringValue,
          ).toBe(m.service);
      }
      // Each checkout is one call of each server route of the service (web 1, api 2, store 1).
      const perCheckout = { web: 3, api: 3, store: 1 }[m.service]!;
      expect(spans, sdk).toBe((m.checkouts.before + m.checkouts.after) * perCheckout);
    }
  });

  it('spans move by one shift per trace: durations and a trace’s relative times are kept', () => {
    // A shift of its own for each trace: (its first byte + 1) seconds.
    const shiftOf = (trace: string) => BigInt(parseInt(trace.slice(0, 2), 16) + 1) * 1_000_000_000n;
    for (const b of loadBodies('python-requests').filter((x) => x.signal === 'traces')) {
      const before = spanTimes(decodeBody('traces', b.body));
      const copy = Buffer.from(b.body);
      expect(shiftSpanTimes(copy, shiftOf)).toBe(before.length);
      const after = spanTimes(decodeBody('traces', copy));
      for (const [i, s] of before.entries()) {
        expect(after[i]!.start - s.start).toBe(shiftOf(s.trace));
        expect(after[i]!.end - after[i]!.start).toBe(s.end - s.start);
      }
    }
  });

  it('metric points (the Java agent’s cumulative HTTP and JVM metrics) each move to their own test time', () => {
    const bodies = loadBodies('java-agent').filter((b) => b.signal === 'metrics');
    expect(bodies.length).toBeGreaterThan(1);
    const map = (ns: bigint) => ns * 2n;
    for (const b of bodies) {
      const before = metricTimes(decodeBody('metrics', b.body));
      const copy = Buffer.from(b.body);
      expect(shiftMetricTimes(copy, map)).toBe(b.items);
      const after = metricTimes(decodeBody('metrics', copy));
      expect(after).toEqual(
        before.map((p) =>
          p
            .split('/')
            .map((t) => String(map(BigInt(t))))
            .join('/'),
        ),
      );
    }
  });
});
