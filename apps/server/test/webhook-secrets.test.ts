/**
 * A Slack or Discord webhook URL is the receiver's credential. The API shows where a webhook
 * points with its token masked, while deliveries still go to the full URL, also after an
 * edit that leaves the URL alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '@onset/testkit';
import { api } from './slo-support.ts';

const TOKEN = 'Xq7bLr2mNf9ZpW4sKt6yHv3c';
const QUERY_KEY = 'k3y-5ecret-value-0042';
let srv: TestServer;
let rx: http.Server;
const paths: string[] = [];

beforeAll(async () => {
  rx = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.close();
  await new Promise((r) => rx?.close(r));
});

describe('webhook URLs are secrets', () => {
  it('are masked in every answer and used whole for deliveries', async () => {
    const port = (rx.address() as AddressInfo).port;
    const A = api(srv.url);
    const full = `http://127.0.0.1:${port}/services/T024BE7LD/B024BE7LH/${TOKEN}?key=${QUERY_KEY}`;
    const created = await A.post('/api/v1/webhooks', { url: full, format: 'slack', name: 'ops' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const answers = [
      created.body,
      (await A.get('/api/v1/webhooks')).body,
      (await A.get(`/api/v1/webhooks/${id}`)).body,
    ];
    for (const body of answers) {
      const text = JSON.stringify(body);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(QUERY_KEY);
    }
    expect(answers[2].url).toBe(
      `http://127.0.0.1:${port}/services/T024BE7LD/B024BE7LH/…${TOKEN.slice(-4)}?key=…${QUERY_KEY.slice(-4)}`,
    );

    expect((await A.post(`/api/v1/webhooks/${id}/test`, {})).status).toBe(200);
    // An edit that does not name the URL keeps the whole one.
    expect((await A.put(`/api/v1/webhooks/${id}`, { name: 'ops-renamed' })).status).toBe(200);
    expect((await A.post(`/api/v1/webhooks/${id}/test`, {})).status).toBe(200);
    expect(paths).toEqual([
      `/services/T024BE7LD/B024BE7LH/${TOKEN}?key=${QUERY_KEY}`,
      `/services/T024BE7LD/B024BE7LH/${TOKEN}?key=${QUERY_KEY}`,
    ]);
  });

  it('keeps route words and short ids readable', async () => {
    const A = api(srv.url);
    const r = await A.post('/api/v1/webhooks', {
      url: 'http://127.0.0.1:9093/api/v2/alerts',
      format: 'alertmanager',
    });
    expect(r.body.url).toBe('http://127.0.0.1:9093/api/v2/alerts');
  });
});
