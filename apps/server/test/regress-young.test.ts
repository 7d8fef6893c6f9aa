/**
 * A new service's step in its first minutes (docs/detection.md "Young
 * series", young.ts): through a real server on embedded PostgreSQL with
 * traffic from the OTel SDK, a service that has been up for 10 minutes
 * (30 calls a minute) gets ×2.5 slower; 6 minutes later one regression is
 * open at the change. Without young.ts the detector tested the young jump
 * at every minute, each retest multiplying its p-value, and nothing opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const CALLS = 30;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const FROM = END - 16 * MIN;
const ONSET = FROM + 10 * MIN;

let server: TestServer;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(16);
  for (let m = FROM; m < END; m += MIN)
    for (let i = 0; i < CALLS; i++) {
      const t = m + ((i + tr.rand()) * MIN) / CALLS;
      const ms = tr.lognormal(8, 0.5) * (m >= ONSET ? 2.5 : 1);
      tr.span({ 'service.name': 'newbie', 'host.name': 'h-1' }, 'GET', SpanKind.SERVER, t, ms, {
        'http.request.method': 'GET',
        'http.route': '/n',
      });
    }
  await tr.send(server.otlpUrl);
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe('a step in a young series', () => {
  it('opens one regression at the change, 6 minutes after it', async () => {
    for (let upto = FROM + 5 * MIN; upto <= END; upto += MIN) {
      const res = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
      expect(res.status, res.text).toBe(200);
    }
    const res = await A.get('/api/v1/regressions?status=all&service=newbie');
    expect(res.status).toBe(200);
    const rs = res.body.regressions as Regression[];
    expect(rs).toHaveLength(1);
    const r = rs[0]!;
    expect(r.shape).toBe('step');
    expect(Math.abs(Date.parse(r.onset) - ONSET)).toBeLessThanOrEqual(MIN);
    expect(r.ratio_p50).toBeGreaterThan(2);
  });
});
