import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';

/**
 * REST input PostgreSQL cannot store (a NUL, a lone UTF-16 surrogate) gets a
 * 400 naming the field, never a 500 (issue 19's reproductions: a NUL in a
 * deploy description, in ?service= or ?regression_id=, a lone surrogate in an
 * SLO label).
 */
let server: TestServer;
const TOKEN = 'admin-token';
beforeAll(async () => {
  server = await startTestServer({ env: { ONSET_TOKENS: `admin:${TOKEN}` } });
});
afterAll(async () => {
  await server?.close();
});

async function call(method: string, path: string, body?: string) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

const slo = {
  name: 'checkout p99',
  service: 'checkout',
  op: 'request',
  view: 'server',
  name_match: '.*',
  threshold_ms: 100,
  objective: 0.99,
  window: '28d',
};
// JSON.stringify writes a lone surrogate as a \ud800 escape: the server's JSON.parse turns it back into one.
const deploy = (description: string) =>
  JSON.stringify({ service: 'checkout', kind: 'code', description });

describe('REST text PostgreSQL cannot store: 400 naming the field', () => {
  const cases: Array<[string, () => ReturnType<typeof call>, RegExp]> = [
    [
      'a NUL in a deploy description',
      () => call('POST', '/api/v1/deploys', deploy('bump\u0000hyper')),
      /body\/description contains a NUL/,
    ],
    [
      'a lone surrogate in a deploy description',
      () => call('POST', '/api/v1/deploys', deploy('bump \udc00')),
      /body\/description contains .*lone UTF-16 surrogate/,
    ],
    [
      'a NUL in ?service= of the series list',
      () => call('GET', '/api/v1/series?service=check%00out'),
      /querystring\/service contains a NUL/,
    ],
    [
      'a NUL in ?service= of the deploys list',
      () => call('GET', '/api/v1/deploys?service=%00'),
      /querystring\/service/,
    ],
    [
      'a NUL in ?regression_id= of the alerts list',
      () => call('GET', '/api/v1/alerts?regression_id=%00'),
      /querystring\/regression_id contains a NUL/,
    ],
    [
      'a lone surrogate in an SLO label',
      () => call('POST', '/api/v1/slos', JSON.stringify({ ...slo, labels: { team: 'a\ud800' } })),
      /body\/labels\/team contains .*lone UTF-16 surrogate/,
    ],
    [
      'a NUL in an SLO label key',
      () => call('POST', '/api/v1/slos', JSON.stringify({ ...slo, labels: { 'te\u0000am': 'x' } })),
      /a key in body\/labels contains a NUL/,
    ],
    [
      'a NUL in a path parameter',
      () => call('GET', '/api/v1/slos/1%00'),
      /params\/id contains a NUL/,
    ],
    [
      'a JSON body nested 10,000 deep',
      () => call('POST', '/api/v1/deploys', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
      /nested more than 32 levels/,
    ],
  ];
  for (const [label, send, message] of cases)
    it(label, async () => {
      const res = await send();
      expect(res.status, res.text).toBe(400);
      expect(res.json()).toEqual({ error: 'bad_request', message: expect.stringMatching(message) });
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    });

  it('nothing was stored by the refused writes, and clean input with U+FFFD and emoji is accepted', async () => {
    const { rows } = await server.onset.pool.query(
      `SELECT (SELECT count(*)::int FROM deploys) AS deploys, (SELECT count(*)::int FROM slos) AS slos`,
    );
    expect(rows[0]).toEqual({ deploys: 0, slos: 0 });
    const ok = await call('POST', '/api/v1/deploys', deploy('bump \uFFFD \ud83d\ude80'));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json().description).toBe('bump \uFFFD \ud83d\ude80');
    const created = await call(
      'POST',
      '/api/v1/slos',
      JSON.stringify({ ...slo, labels: { team: '\ud83d\ude80' } }),
    );
    expect(created.status, created.text).toBe(201);
  });
});
