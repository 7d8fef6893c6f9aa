/**
 * An incident's suspects are its members' (docs/regressions.md "Attribution"),
 * through a real server on embedded PostgreSQL with traffic from the official
 * OTel SDK. A chain web → api → store: the store's dependency bump makes its
 * /stock 3× slower, and every call up the chain slows with it; web's side of
 * its call to the api (queueing in web) shows the step best, so a view of the
 * web → api edge heads the regression. That view weighs web's and the api's
 * markers only, and the api released 8 minutes before the onset: the
 * regression must still name the store's bump first, the suspect its store
 * member fits, in the API and in the page a receiver gets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Traffic } from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { api, onlyWebhook, startReceiver, type Receiver } from './slo-support.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
const ONSET = END - 30 * MIN;
const FROM = ONSET - 180 * MIN;

let server: TestServer;
let rx: Receiver;
let A: ReturnType<typeof api>;
let regressions: Regression[] = [];
const ids: Record<'api' | 'store', string> = { api: '', store: '' };

const web = { 'service.name': 'web', 'host.name': 'web-1' };
const apiRes = { 'service.name': 'api', 'host.name': 'api-1' };
const store = { 'service.name': 'store', 'host.name': 'store-1' };

/** One checkout a few seconds: web calls api /items/{id}, which calls store /stock/{id}. */
function chain(tr: Traffic) {
  for (let t = FROM; t < END; t += 3_000) {
    const after = t >= ONSET;
    const storeMs = tr.lognormal(after ? 12 : 4, 0.08);
    const apiOwnMs = tr.lognormal(1, 0.1);
    const apiNet = 0.2 + tr.rand() * 0.1;
    const apiMs = apiOwnMs + storeMs + apiNet;
    // Web's own wait for a connection grows with the slower calls (more of them in flight).
    const webNet = 0.3 + tr.rand() * 0.1 + (after ? 18 + tr.rand() * 4 : 0);
    const webCall = tr.span(web, 'GET', SpanKind.CLIENT, t, apiMs + webNet, {
      'http.request.method': 'GET',
      'url.full': 'http://api:8080/items/42',
      'server.address': 'api',
      'peer.service': 'api',
    });
    const apiServer = tr.span(
      apiRes,
      'GET /items/{id}',
      SpanKind.SERVER,
      t + webNet / 2,
      apiMs,
      { 'http.request.method': 'GET', 'http.route': '/items/{id}' },
      webCall,
    );
    const apiCall = tr.span(
      apiRes,
      'GET',
      SpanKind.CLIENT,
      t + webNet / 2 + apiOwnMs / 2,
      storeMs + apiNet,
      {
        'http.request.method': 'GET',
        'url.full': 'http://store:8081/stock/42',
        'server.address': 'store',
        'peer.service': 'store',
      },
      apiServer,
    );
    tr.span(
      store,
      'GET /stock/{id}',
      SpanKind.SERVER,
      t + webNet / 2 + apiOwnMs / 2 + apiNet / 2,
      storeMs,
      { 'http.request.method': 'GET', 'http.route': '/stock/{id}' },
      apiCall,
    );
  }
}

async function postMarker(body: Record<string, unknown>): Promise<string> {
  const res = await A.post('/api/v1/deploys', body);
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  server = await startTestServer();
  A = api(server.url);
  rx = await startReceiver();
  await onlyWebhook(A, { url: rx.url, format: 'json' });
  const tr = new Traffic(7);
  chain(tr);
  await tr.send(server.otlpUrl);
  // The api's release 8 minutes before the onset changed nothing; the store's bump is the cause.
  ids.api = await postMarker({
    service: 'api',
    kind: 'code',
    from_version: 'api-1',
    to_version: 'api-2',
    at: new Date(ONSET - 8 * MIN).toISOString(),
  });
  ids.store = await postMarker({
    service: 'store',
    kind: 'dependency',
    component: 'stock-db-driver',
    from_version: '4.1.0',
    to_version: '5.0.0',
    at: new Date(ONSET + MIN).toISOString(),
  });
  const res = await A.post('/api/v1/detect', { upto: new Date(END).toISOString() });
  expect(res.status, res.text).toBe(200);
  const list = await A.get('/api/v1/regressions');
  expect(list.status).toBe(200);
  regressions = list.body.regressions as Regression[];
  await runDeliveryPass(server.onset.pool, { now: Date.now() + 10 * MIN, baseUrl: server.url });
}, 180_000);

afterAll(async () => {
  await rx?.close();
  await server?.close();
});

const describeAll = () =>
  regressions
    .map(
      (r) =>
        `${r.service} ${r.view} ${r.name} -> ${r.peer} (members: ${r.members
          .map((m) => `${m.service} ${m.view} ${m.name}`)
          .join('; ')}; suspects: ${r.suspects.map((s) => `${s.service} ${s.score}`).join(', ')})`,
    )
    .join('\n');

describe('an incident up a call chain', () => {
  it('is one regression headed by a caller’s view, with the store’s server view among its members', () => {
    expect(regressions, describeAll()).toHaveLength(1);
    const [r] = regressions;
    expect(r!.service, describeAll()).toBe('web');
    expect(
      r!.members.some((m) => m.service === 'store' && m.view === 'server'),
      describeAll(),
    ).toBe(true);
  });

  it('names the store’s bump first, the api’s earlier release after it', () => {
    const [r] = regressions;
    expect(r!.suspects.map((s) => s.deploy_id).slice(0, 2), describeAll()).toEqual([
      ids.store,
      ids.api,
    ]);
    expect(r!.suspects[0]!.reason, describeAll()).toMatch(/stock-db-driver/);
  });

  it('pages once, naming the store’s bump as the likely cause', () => {
    const firing = rx.requests.filter(
      (x) => x.json?.status === 'firing' && x.json?.alert?.type === 'regression',
    );
    expect(firing, describeAll()).toHaveLength(1);
    expect(JSON.stringify(firing[0]!.json), describeAll()).toMatch(/stock-db-driver/);
    expect(JSON.stringify(firing[0]!.json)).not.toMatch(/api-2/);
  });
});
