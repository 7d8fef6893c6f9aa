/**
 * Series at any count, on a real server: 5,000 series (10 services × 500 names, sent as
 * OTLP) and four edge and kernel series. `GET /api/v1/series` pages, counts every match and
 * searches on the server; `GET /api/v1/series/options` answers the Explorer's pickers over
 * every series, not a page of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { SeriesList, SeriesOptions } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { MANY_SERVICES, sendManySeries } from '@onset/testkit/many-series';

let srv: TestServer;
const MANY = 5000;
const EXTRA = 4;

async function get<T>(path: string): Promise<T> {
  const res = await fetch(`${srv.url}/api/v1${path}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}
const list = (query = '') => get<SeriesList>(`/series${query}`);
const options = (query = '') => get<SeriesOptions>(`/series/options${query}`);

/** The Explorer pickers' cases: an edge with two callees, its callee's server view, an unmount. */
async function sendEdgeAndKernelSeries(): Promise<void> {
  const now = BigInt(Date.now() - 60_000) * 1_000_000n;
  const span = (name: string, kind: number, attrs: Record<string, string> = {}) => ({
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    name,
    kind,
    startTimeUnixNano: now.toString(),
    endTimeUnixNano: (now + 2_000_000n).toString(),
    attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } })),
  });
  const resource = (service: string, spans: unknown[]) => ({
    resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
    scopeSpans: [{ spans }],
  });
  const res = await fetch(`${srv.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      resourceSpans: [
        resource('checkout', [
          span('GET /lookup', 3, { 'peer.service': 'urlite' }),
          span('GET /lookup', 3, { 'peer.service': 'pricing' }),
        ]),
        resource('urlite', [span('GET /lookup', 2)]),
        resource('containerd', [span('unmount', 1, { 'onset.op': 'unmount' })]),
      ],
    }),
  });
  expect(res.status, await res.text()).toBe(200);
}

beforeAll(async () => {
  srv = await startTestServer();
  const t0 = performance.now();
  await sendManySeries(srv.otlpUrl);
  const ms = Math.round(performance.now() - t0);
  await sendEdgeAndKernelSeries();
  console.log(`series-list: ${MANY} series sent and stored in ${ms} ms`);
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

describe('GET /api/v1/series', () => {
  it('answers a client that sends no paging the same first 1,000, with the total and where to go on', async () => {
    const first = await list();
    expect(first.series).toHaveLength(1000);
    expect(first).toMatchObject({ total: MANY + EXTRA, next_offset: 1000 });
    const explicit = await list('?limit=1000&offset=0');
    expect(explicit.series.map((s) => s.id)).toEqual(first.series.map((s) => s.id));
  });

  it('pages through every series exactly once, in a stable order', async () => {
    const seen = new Set<string>();
    let offset: number | null = 0;
    let pages = 0;
    let lastPage: SeriesList | undefined;
    while (offset !== null) {
      const p: SeriesList = await list(`?limit=700&offset=${offset}`);
      expect(p.total).toBe(MANY + EXTRA);
      for (const s of p.series) seen.add(s.id);
      offset = p.next_offset;
      lastPage = p;
      pages++;
    }
    expect(pages).toBe(Math.ceil((MANY + EXTRA) / 700));
    expect(seen.size).toBe(MANY + EXTRA);
    expect(lastPage!.series).toHaveLength((MANY + EXTRA) % 700);
    // Past the end: an empty page that still counts them all.
    expect(await list(`?offset=${MANY + EXTRA}`)).toEqual({
      series: [],
      total: MANY + EXTRA,
      next_offset: null,
    });
  });

  it('searches on the server: words and filters together, counted past the page', async () => {
    const lastName = 'zinnia trail juliet';
    const found = await list(`?q=${encodeURIComponent('juliet zinnia trail')}`);
    expect(found.series.map((s) => [s.service, s.name])).toEqual([['juliet', lastName]]);
    expect(found).toMatchObject({ total: 1, next_offset: null });
    // 'zinnia' pairs with 20 words in every service; the service filter keeps juliet's.
    const zinnia = await list('?service=juliet&q=zinnia&limit=15');
    expect(zinnia.series).toHaveLength(15);
    expect(zinnia).toMatchObject({ total: 20, next_offset: 15 });
    expect(zinnia.series.every((s) => s.service === 'juliet' && s.name.startsWith('zinnia '))).toBe(
      true,
    );
    // A host is a word too: each service's series come from its own host.
    expect((await list('?q=india-host&limit=1')).total).toBe(500);
    expect((await list('?q=nothing-like-this')).total).toBe(0);
    expect((await fetch(`${srv.url}/api/v1/series?limit=0`)).status).toBe(400);
    expect((await fetch(`${srv.url}/api/v1/series?limit=1001`)).status).toBe(400);
  });

  it('filters by peer: a callee, or none', async () => {
    const toUrlite = await list('?service=checkout&peer=urlite');
    expect(toUrlite.series.map((s) => [s.view, s.name, s.peer])).toEqual([
      ['client', 'GET /lookup', 'urlite'],
    ]);
    expect((await list('?service=checkout&peer=')).total).toBe(0);
    expect((await list('?service=urlite&peer=')).total).toBe(1);
  });
});

describe('GET /api/v1/series/options', () => {
  it('lists every service and every name, however many series there are', async () => {
    const o = await options();
    expect(o.services).toEqual({
      values: [...MANY_SERVICES, 'checkout', 'containerd', 'urlite'].sort(),
      total: 13,
    });
    // Names across all services: more than a picker lists, and it says so.
    expect(o.names.values).toHaveLength(1000);
    expect(o.names.total).toBe(MANY + 2);
    expect(o.matches).toBe(MANY + EXTRA);
    const juliet = await options('?service=juliet');
    expect(juliet.names.total).toBe(500);
    expect(juliet.names.values).toHaveLength(500);
    expect(juliet.names.values.at(-1)).toBe('zinnia trail juliet');
    expect(juliet.selection).toEqual({ service: 'juliet' });
    const one = await options(`?service=juliet&name=${encodeURIComponent('zinnia trail juliet')}`);
    expect(one.matches).toBe(1);
  });

  it('narrows options as choices are made and counts the series the choice designates', async () => {
    const o = await options('?service=checkout');
    expect(o.views.values).toEqual(['client']);
    expect(o.peers.values).toEqual(['pricing', 'urlite']);
    expect(o.matches).toBe(2);
    expect((await options('?service=checkout&peer=urlite')).matches).toBe(1);
    expect((await options('?service=containerd')).matches).toBe(1);
  });

  it('drops later choices that a new earlier choice makes impossible', async () => {
    const o = await options(
      `?service=containerd&view=client&name=${encodeURIComponent('GET /lookup')}&peer=urlite`,
    );
    expect(o.selection).toEqual({ service: 'containerd' });
    expect(o.matches).toBe(1);
    // An empty peer is "any peer".
    expect((await options('?service=checkout&peer=')).selection).toEqual({ service: 'checkout' });
  });
});
