/**
 * A sustained ramp is one regression, shape 'drift' with its rate
 * (docs/detection.md "Drift"): through a real server on embedded PostgreSQL
 * with traffic from the OTel SDK, a service whose every call slows ×3 over
 * three hours (a leak) after three steady hours, fed pass by pass every 15
 * minutes, opens exactly one regression, labelled drift with a rate near
 * ×1.44 an hour, not a series of steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const FROM = END - 360 * MIN;
const RAMP = FROM + 180 * MIN;
const RATE = Math.log(3) / 180; // per minute: ×3 over three hours

let server: TestServer;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(23);
  for (let m = FROM; m < END; m += MIN)
    for (let i = 0; i < 20; i++) {
      const t = m + ((i + 0.5) * MIN) / 20;
      const grown = Math.exp(RATE * Math.max(0, (m - RAMP) / MIN));
      tr.span(
        { 'service.name': 'leaky', 'host.name': 'h-1' },
        'GET',
        SpanKind.SERVER,
        t,
        tr.lognormal(8 * grown, 0.15),
        { 'http.request.method': 'GET', 'http.route': '/l' },
      );
    }
  await tr.send(server.otlpUrl);
}, 180_000);

afterAll(async () => {
  await server?.close();
});

describe('a sustained ramp', () => {
  it('is one regression, labelled drift with its rate, however many passes see it', async () => {
    for (let upto = RAMP - 30 * MIN; upto <= END; upto += 15 * MIN) {
      const res = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
      expect(res.status, res.text).toBe(200);
    }
    const res = await A.get('/api/v1/regressions?status=all&service=leaky');
    expect(res.status).toBe(200);
    const rs = res.body.regressions as Regression[];
    expect(rs.map((r) => r.shape)).toEqual(['drift']);
    const r = rs[0]!;
    const perHour = Math.exp(60 * RATE); // ×1.44
    expect(r.drift_per_hour).not.toBeNull();
    expect(Math.abs(Math.log(r.drift_per_hour!) / Math.log(perHour) - 1)).toBeLessThan(0.3);
    expect(Math.abs(Date.parse(r.onset) - RAMP)).toBeLessThanOrEqual(20 * MIN);
    expect(r.ratio_p50).toBeGreaterThan(1.3);
    expect(r.members).toHaveLength(1);
  });
});
