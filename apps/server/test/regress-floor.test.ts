/**
 * The caller-only +40 ms of issue 20 (docs/detection.md "Tail collapses"):
 * through a real server on embedded PostgreSQL with traffic from the OTel
 * SDK, a caller's client spans and its callee's server spans (paired into
 * one edge). The caller has its own slow tail (GC pauses, event-loop stalls:
 * 3 % of calls, ~40 ms and spread wide), so its p99 wanders (~20-70 ms); at the onset
 * the callee starts writing header and body separately with Nagle on, and
 * 8 % of calls wait the caller's delayed-ACK timer (40 ms plus a tick). The
 * caller's p99 settles onto a steady band, its median stays put, and the
 * callee's own spans do not move. A regression opens on the caller's client
 * view at the onset, as a floor with its band; the callee's server view is
 * not part of it. Without tail-collapse.ts the client view opens nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const CALLS = 100;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const ONSET = END - 100 * MIN;
const FROM = ONSET - 180 * MIN;
const caller = { 'service.name': 'front', 'host.name': 'web-1' };
const callee = { 'service.name': 'lookup', 'host.name': 'api-1' };

let server: TestServer;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(20);
  for (let m = FROM; m < END; m += MIN)
    for (let i = 0; i < CALLS; i++) {
      const start = m + ((i + tr.rand()) * MIN) / CALLS;
      // The callee: a few ms of work, sometimes a store lookup; unchanged throughout.
      const serverMs = tr.rand() < 0.05 ? 8 + 12 * tr.rand() : 1 + 2 * tr.rand();
      const netMs = 0.15 + 0.1 * tr.rand();
      let clientMs = serverMs + netMs;
      if (tr.rand() < 0.03) clientMs += tr.lognormal(40, 0.6); // the caller's own stalls
      if (start >= ONSET && tr.rand() < 0.08) clientMs += 40 + 4 * tr.rand(); // delayed ACK
      const client = tr.span(caller, 'GET', SpanKind.CLIENT, start, clientMs, {
        'http.request.method': 'GET',
        'http.route': '/lookup',
        'peer.service': 'lookup',
        'server.address': 'lookup',
      });
      tr.span(
        callee,
        'GET',
        SpanKind.SERVER,
        start + netMs / 2,
        serverMs,
        { 'http.request.method': 'GET', 'http.route': '/lookup' },
        client,
      );
    }
  await tr.send(server.otlpUrl);
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe('a caller-only delayed ACK: the p99 settles onto a band, the median stays', () => {
  it('opens a floor on the caller’s client view at the change, not on the callee', async () => {
    for (let upto = ONSET - 10 * MIN; upto <= END; upto += 10 * MIN) {
      const res = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
      expect(res.status, res.text).toBe(200);
    }
    const res = await A.get('/api/v1/regressions?status=all');
    expect(res.status).toBe(200);
    const rs = res.body.regressions as Regression[];
    const members = rs.flatMap((r) => r.members.map((m) => ({ r, m })));
    // The callee's own spans did not move.
    expect(members.filter(({ m }) => m.service === 'lookup' && m.view === 'server')).toEqual([]);
    const client = members.filter(({ m }) => m.service === 'front' && m.view === 'client');
    expect(client, JSON.stringify(rs.map((r) => [r.view, r.shape, r.onset]))).toHaveLength(1);
    const { r, m } = client[0]!;
    expect(Math.abs(Date.parse(m.onset) - ONSET)).toBeLessThanOrEqual(5 * MIN);
    expect(m.metric).toBe('p99');
    expect(m.ratio_p50).toBeLessThan(1.15);
    // A floor with its band: most minutes' p99 now sit just above the 40 ms timer, in a band
    // far narrower than the one they wandered over before.
    expect(r.shape).toBe('floor');
    const band = r.band!;
    expect(band.after_ms[0]).toBeGreaterThan(40);
    expect(band.after_ms[1]).toBeLessThan(60);
    expect(band.after_ms[1] - band.after_ms[0]).toBeLessThan(
      (band.before_ms[1] - band.before_ms[0]) / 2,
    );
    // And the evidence names the mechanism: a share of calls waits ≈40 ms on the caller's side.
    const ev = await A.get(`/api/v1/regressions/${r.id}/evidence`);
    expect(ev.status).toBe(200);
    const hint = (ev.body.hints as { id: string; detail: string }[])[0];
    expect(hint?.id, JSON.stringify(ev.body.hints)).toBe('tcp-delayed-ack');
    expect(hint!.detail).toMatch(/A share of calls now waits ≈40 ms more/);
  });
});
