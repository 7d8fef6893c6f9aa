/**
 * GET /api/v1/deploys?series_id=: the markers that can explain a change in a
 * series, by the rule attribution uses (core's markerTouchesSeries): its
 * service, an edge's callee, or a host feeding the series. Real OTLP spans
 * make the series; the filter's answer is checked against core's predicate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { markerTouchesSeries } from '@onset/core';
import { startTestServer, type TestServer } from '@onset/testkit';

let server: TestServer;
let clientSeries: { id: string; service: string; peer: string | null };

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

beforeAll(async () => {
  server = await startTestServer();
  const now = BigInt(Date.now()) * 1_000_000n;
  // checkout on web-1 calls urlite: a CLIENT span with peer.service.
  const res = await fetch(`${server.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [str('service.name', 'checkout'), str('host.name', 'web-1')] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: randomBytes(16).toString('hex'),
                  spanId: randomBytes(8).toString('hex'),
                  name: 'GET',
                  kind: 3,
                  startTimeUnixNano: (now - 5_000_000n).toString(),
                  endTimeUnixNano: now.toString(),
                  attributes: [
                    str('http.request.method', 'GET'),
                    str('url.template', '/lookup'),
                    str('peer.service', 'urlite'),
                  ],
                },
              ],
            },
          ],
        },
      ],
    }),
  });
  expect(res.status, await res.text()).toBe(200);
  const list = (await (await fetch(`${server.url}/api/v1/series?service=checkout`)).json()) as {
    series: Array<{ id: string; service: string; peer: string | null; view: string }>;
  };
  clientSeries = list.series.find((s) => s.peer === 'urlite')!;
  expect(clientSeries, JSON.stringify(list)).toBeTruthy();

  const markers = [
    { service: 'checkout', kind: 'code', description: 'own' },
    { service: 'urlite', kind: 'dependency', description: 'callee' },
    { service: 'billing', kind: 'code', description: 'other' },
    { hosts: ['web-1'], kind: 'kernel', description: 'kernel-here' },
    { hosts: ['node-9'], kind: 'kernel', description: 'kernel-elsewhere' },
    { service: 'billing', hosts: ['web-1'], kind: 'code', description: 'neighbour-on-host' },
    { service: 'checkout', hosts: ['node-9'], kind: 'config', description: 'own-elsewhere' },
  ];
  for (const m of markers) {
    const r = await fetch(`${server.url}/api/v1/deploys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(m),
    });
    expect(r.status, await r.text()).toBe(201);
  }
});
afterAll(() => server?.close());

interface Marker {
  service: string | null;
  hosts: string[];
  description: string;
}
const list = async (q: string) => {
  const r = await fetch(`${server.url}/api/v1/deploys?${q}`);
  return { status: r.status, body: (await r.json()) as { deploys: Marker[]; message?: string } };
};

describe('deploys relevant to a series', () => {
  it('keeps own, callee and same-host markers, as attribution does', async () => {
    const { status, body } = await list(`series_id=${clientSeries.id}`);
    expect(status).toBe(200);
    const names = body.deploys.map((d) => d.description).sort();
    expect(names).toEqual(['callee', 'kernel-here', 'neighbour-on-host', 'own', 'own-elsewhere']);
    // The same markers core's predicate keeps from the full list.
    const all = (await list('')).body.deploys;
    const scope = { service: 'checkout', peer: 'urlite', hosts: ['web-1'] };
    expect(
      all
        .filter((d) => markerTouchesSeries(d, scope))
        .map((d) => d.description)
        .sort(),
    ).toEqual(names);
  });

  it('combines with the other filters', async () => {
    const { body } = await list(`series_id=${clientSeries.id}&kind=kernel`);
    expect(body.deploys.map((d) => d.description)).toEqual(['kernel-here']);
  });

  it('answers 400 for an unknown or malformed series id', async () => {
    const unknown = await list('series_id=999999');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/series 999999 does not exist/);
    expect((await list('series_id=abc')).status).toBe(400);
  });
});
