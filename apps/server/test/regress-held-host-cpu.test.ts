/**
 * A step held for host contention (docs/regressions.md "Held for host
 * contention"), through a real server on embedded PostgreSQL with traffic
 * from the OTel SDK: three services, each on a host of its own, whose calls
 * get the same step at the same minute (every call ×1.8). Their
 * hosts' agents report the share of wanted CPU the hypervisor took
 * (`host` series `cpu-steal`, ms per second):
 *
 *  - on `noisy-neighbour`'s host it rises from ~15 to ~150 ms/s at the step
 *    and stays there, and no deploy touches the service: the step is held
 *    (no regression; the pass lists it, /metrics counts it);
 *  - on `steady-host`'s host it stays ~15 ms/s: the same step opens a
 *    regression (the hold does not swallow steps on hosts that kept their CPU);
 *  - on `deployed`'s host it rises as on the first, but the service was
 *    deployed at the step: a regression opens with the deploy as top suspect.
 *
 * No host series opens anything itself, although each steal rise is a large
 * step of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { HeldStep, Regression } from '@onset/contract';
import { api } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const ONSET = END - 60 * MIN;
const FROM = ONSET - 150 * MIN;

const CASES = [
  { service: 'noisy-neighbour', host: 'h-noisy', stealRises: true, deployed: false },
  { service: 'steady-host', host: 'h-steady', stealRises: false, deployed: false },
  { service: 'deployed', host: 'h-deployed', stealRises: true, deployed: true },
] as const;

let server: TestServer;
let A: ReturnType<typeof api>;
const held: HeldStep[] = [];
let markerId = '';

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  const tr = new Traffic(47);
  for (const c of CASES) {
    const resource = { 'service.name': c.service, 'host.name': c.host };
    const agent = { 'service.name': 'onset-agent', 'host.name': c.host };
    for (let m = FROM; m < END; m += MIN) {
      for (let i = 0; i < 100; i++) {
        const t = m + ((i + 0.5) * MIN) / 100;
        let ms = tr.lognormal(5, 0.4);
        if (tr.rand() < 0.01) ms *= 3 + 27 * tr.rand();
        if (m >= ONSET) ms *= 1.8;
        tr.span(resource, 'GET', SpanKind.SERVER, t, ms, {
          'http.request.method': 'GET',
          'http.route': '/r',
        });
      }
      // The agent's minute of stolen CPU (ms per second of CPU wanted), as apps/agent reports it.
      const steal = (c.stealRises && m >= ONSET ? 150 : 15) * (0.6 + 0.8 * tr.rand());
      tr.span(agent, 'cpu-steal', SpanKind.INTERNAL, m, steal, {
        'onset.op': 'host',
        'onset.window_ms': MIN,
      });
    }
  }
  await tr.send(server.otlpUrl);
  const res = await A.post('/api/v1/deploys', {
    service: 'deployed',
    kind: 'code',
    to_version: '2.0.0',
    at: new Date(ONSET - MIN).toISOString(),
  });
  expect(res.status, res.text).toBe(201);
  markerId = res.body.id;
  for (let upto = ONSET - 10 * MIN; upto <= END; upto += 10 * MIN) {
    const r = await A.post('/api/v1/detect', { upto: new Date(upto).toISOString() });
    expect(r.status, r.text).toBe(200);
    held.push(...((r.body.detection.held as HeldStep[] | undefined) ?? []));
  }
}, 300_000);

afterAll(async () => {
  await server?.close();
});

async function regressionsOf(service: string): Promise<Regression[]> {
  const res = await A.get(`/api/v1/regressions?status=all&service=${service}`);
  expect(res.status).toBe(200);
  return res.body.regressions as Regression[];
}

describe('a step while the hypervisor took the host’s CPU', () => {
  it('is held when no deploy explains it: no regression, listed by the pass and counted', async () => {
    expect(await regressionsOf('noisy-neighbour')).toEqual([]);
    const seriesId = (await A.get('/api/v1/series?service=noisy-neighbour')).body.series[0].id;
    const mine = held.filter((h) => h.series_id === String(seriesId));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.hosts).toEqual(['h-noisy']);
    expect(Math.abs(Date.parse(mine[0]!.onset) - ONSET)).toBeLessThanOrEqual(5 * MIN);
    expect(mine[0]!.steal_before_ms_per_s).toBeLessThan(30);
    expect(mine[0]!.steal_after_ms_per_s).toBeGreaterThan(90);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/onset_regressions_held_total\{reason="host_cpu_steal"\} [1-9]/);
  });

  it('opens as usual on a host whose CPU stayed its own', async () => {
    const rs = await regressionsOf('steady-host');
    expect(rs).toHaveLength(1);
    expect(Math.abs(Date.parse(rs[0]!.onset) - ONSET)).toBeLessThanOrEqual(5 * MIN);
  });

  it('opens with the deploy as top suspect when a deploy explains it', async () => {
    const rs = await regressionsOf('deployed');
    expect(rs).toHaveLength(1);
    expect(rs[0]!.suspects[0]?.deploy_id).toBe(markerId);
    expect(held.some((h) => h.hosts.includes('h-deployed'))).toBe(false);
  });

  it('never opens a regression on a host series', async () => {
    const rs = await regressionsOf('onset-agent');
    expect(rs).toEqual([]);
    const steal = (await A.get('/api/v1/series?service=onset-agent')).body.series as {
      op: string;
      name: string;
    }[];
    expect(steal.map((s) => `${s.op} ${s.name}`)).toEqual(['host cpu-steal']);
  });
});
