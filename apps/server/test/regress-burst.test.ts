/**
 * A burst is not paged (docs/detection.md "Transients", alerting.ts
 * stepHeld): through a real server on embedded PostgreSQL with traffic from
 * the OTel SDK, a 5-minute stall (every call ×50, then back) opens a
 * regression once the detector confirms it (4 minutes in), which raises no
 * alert while the step has not held 8 minutes, and is resolved without ever
 * alerting once latency is back: closed as soon as its last 3 minutes are
 * back (core's burstVerdict), labelled shape 'transient' in the API. A
 * sustained step beside it, opened at the same moment, is alerted as soon as
 * it has held and stays a 'step'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const ONSET = END - 40 * MIN;
const FROM = ONSET - 180 * MIN;

let server: TestServer;
let A: ReturnType<typeof api>;

async function detect(upto: number): Promise<void> {
  const res = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
  expect(res.status, res.text).toBe(200);
}

async function regressions(): Promise<Regression[]> {
  const res = await A.get('/api/v1/regressions?status=all');
  expect(res.status).toBe(200);
  return res.body.regressions as Regression[];
}

async function alertsOf(id: string): Promise<Array<{ status: string }>> {
  const res = await A.get(`/api/v1/alerts?regression_id=${id}`);
  expect(res.status).toBe(200);
  return res.body.alerts as Array<{ status: string }>;
}

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(11);
  for (let m = FROM; m < END; m += MIN)
    for (let i = 0; i < 20; i++) {
      const t = m + ((i + 0.5) * MIN) / 20;
      const inBurst = m >= ONSET && m < ONSET + 5 * MIN;
      tr.span(
        { 'service.name': 'stalls', 'host.name': 'h-1' },
        'GET',
        SpanKind.SERVER,
        t,
        tr.lognormal(inBurst ? 250 : 5, 0.15),
        { 'http.request.method': 'GET', 'http.route': '/s' },
      );
      tr.span(
        { 'service.name': 'steps', 'host.name': 'h-2' },
        'GET',
        SpanKind.SERVER,
        t,
        tr.lognormal(m >= ONSET ? 25 : 5, 0.15),
        { 'http.request.method': 'GET', 'http.route': '/t' },
      );
    }
  await tr.send(server.otlpUrl);
}, 180_000);

afterAll(async () => {
  await server?.close();
});

describe('bursts are not paged', () => {
  it('6 minutes after the onset both are open and neither is alerted (the steps have not held 8 minutes)', async () => {
    await detect(ONSET + 6 * MIN);
    const rs = await regressions();
    const stall = rs.find((r) => r.service === 'stalls');
    const step = rs.find((r) => r.service === 'steps');
    expect(stall, JSON.stringify(rs.map((r) => r.service))).toBeDefined();
    expect(step).toBeDefined();
    expect(stall!.status).toBe('open');
    expect(await alertsOf(stall!.id)).toEqual([]);
    expect(await alertsOf(step!.id)).toEqual([]);
  });

  it('once latency is back the burst is resolved without an alert; the sustained step is alerted', async () => {
    await detect(ONSET + 10 * MIN);
    const mid = await regressions();
    const step = mid.find((r) => r.service === 'steps')!;
    expect((await alertsOf(step.id)).map((a) => a.status)).toEqual(['firing']);
    const stall = mid.find((r) => r.service === 'stalls')!;
    expect(await alertsOf(stall.id)).toEqual([]);
    // Over 3 minutes after it ended: closed at once, labelled transient, never paged.
    expect(stall.status).toBe('resolved');
    expect(stall.shape).toBe('transient');
    expect(stall.resolution).toMatch(/burst of 5 min/);
    expect(step.status).toBe('open');
    expect(step.shape).toBe('step');
    expect(step.drift_per_hour).toBeNull();

    await detect(END);
    const rs = await regressions();
    const over = rs.find((r) => r.id === stall.id)!;
    expect(over.status).toBe('resolved');
    expect(over.shape).toBe('transient');
    expect(await alertsOf(stall.id)).toEqual([]);
    expect(rs.filter((r) => r.service === 'stalls')).toHaveLength(1);
  });
});
