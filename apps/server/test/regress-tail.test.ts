/**
 * A tail step the median does not show (docs/detection.md "Tail floors"):
 * through a real server on embedded PostgreSQL with traffic from the OTel
 * SDK, 5 % of a service's calls become ×5 slower (a retry, a cold cache)
 * while the median stays put and 1 % of calls were already slow (a noisy
 * p99). One regression opens, on the p99, at the right minute, with the
 * median's ratio near 1. (On the server's histogram quantiles this case is
 * confirmed by the level tests already; the p99 floor test, tail-floor.ts,
 * adds the noisier ones, measured by eval:detect's p99 row and the core
 * unit test.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const SHARE = 0.05;
const SLOW = 5;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const ONSET = END - 90 * MIN;
const FROM = ONSET - 180 * MIN;

let server: TestServer;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(31);
  for (let m = FROM; m < END; m += MIN)
    for (let i = 0; i < 100; i++) {
      const t = m + ((i + 0.5) * MIN) / 100;
      let ms = tr.lognormal(5, 0.4);
      if (tr.rand() < 0.01) ms *= 3 + 27 * tr.rand(); // background slow calls
      if (m >= ONSET && tr.rand() < SHARE) ms *= SLOW; // the change
      tr.span({ 'service.name': 'retrier', 'host.name': 'h-1' }, 'GET', SpanKind.SERVER, t, ms, {
        'http.request.method': 'GET',
        'http.route': '/r',
      });
    }
  await tr.send(server.otlpUrl);
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe('a p99 step with the median unmoved', () => {
  it('opens one regression on the p99 at the change', async () => {
    for (let upto = ONSET - 10 * MIN; upto <= END; upto += 10 * MIN) {
      const res = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
      expect(res.status, res.text).toBe(200);
    }
    const res = await A.get('/api/v1/regressions?status=all&service=retrier');
    expect(res.status).toBe(200);
    const rs = res.body.regressions as Regression[];
    expect(rs).toHaveLength(1);
    const r = rs[0]!;
    expect(r.metric).toBe('p99');
    expect(r.shape).toBe('step');
    expect(Math.abs(Date.parse(r.onset) - ONSET)).toBeLessThanOrEqual(5 * MIN);
    expect(r.ratio_p99).toBeGreaterThan(1.2);
    expect(r.ratio_p50).toBeLessThan(1.1);
  });
});
