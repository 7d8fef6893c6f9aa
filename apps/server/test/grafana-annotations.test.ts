/**
 * With GRAFANA_URL and GRAFANA_TOKEN set, Onset posts deploy markers to
 * Grafana's HTTP API as annotations. Grafana cannot run here, so a loopback
 * HTTP server plays its /api/annotations endpoint.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';

interface Received {
  auth: string | undefined;
  path: string;
  body: { time: number; timeEnd?: number; tags: string[]; text: string };
}

let grafana: Server;
let grafanaUrl: string;
const received: Received[] = [];
let failNext = 0;

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.on('data', (d) => (s += d));
    req.on('end', () => resolve(s));
  });

beforeAll(async () => {
  grafana = createServer(async (req, res) => {
    const body = await readBody(req);
    if (failNext > 0) {
      failNext--;
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"message":"down for maintenance"}');
      return;
    }
    received.push({ auth: req.headers.authorization, path: req.url ?? '', body: JSON.parse(body) });
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: received.length, message: 'Annotation added' }));
  });
  await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', r));
  grafanaUrl = `http://127.0.0.1:${(grafana.address() as AddressInfo).port}/grafana`;
});
afterAll(async () => {
  await new Promise((r) => grafana.close(r));
});

async function waitFor(n: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (received.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

describe('deploy markers pushed to Grafana annotations', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The push is a scheduler job (not a timer in the /metrics plugin), so this server runs its scheduler.
    server = await startTestServer({
      env: { GRAFANA_URL: grafanaUrl, GRAFANA_TOKEN: 'glsa_test_token' },
      scheduler: true,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (marker: Record<string, unknown>) =>
    fetch(`${server.url}/api/v1/deploys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(marker),
    });

  it('posts each marker once, with the token, its time, kind tags and versions', async () => {
    const at = '2026-11-20T10:42:00.000Z';
    expect(
      (
        await post({
          service: 'urlite',
          kind: 'dependency',
          component: 'hyper',
          from_version: '0.12.35',
          to_version: '0.13.1',
          at,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await post({
          hosts: ['node-17'],
          kind: 'kernel',
          from_version: '4.4.0-138',
          to_version: '4.15.0-36',
          at,
        })
      ).status,
    ).toBe(201);
    await waitFor(2);
    expect(received).toHaveLength(2);
    for (const r of received) {
      expect(r.auth).toBe('Bearer glsa_test_token');
      expect(r.path).toBe('/grafana/api/annotations');
      expect(r.body.time).toBe(Date.parse(at));
    }
    const dep = received.find((r) => r.body.tags.includes('dependency'))!;
    expect(dep.body.tags).toEqual(
      expect.arrayContaining(['onset', 'deploy', 'dependency', 'urlite']),
    );
    expect(dep.body.text).toContain('hyper 0.12.35 → 0.13.1');
    const kernel = received.find((r) => r.body.tags.includes('kernel'))!;
    expect(kernel.body.text).toBe('kernel 4.4.0-138 → 4.15.0-36 on node-17');

    // Nothing is posted twice on later ticks.
    await new Promise((r) => setTimeout(r, 3_500));
    expect(received).toHaveLength(2);
  });

  it('retries when Grafana fails, without losing or duplicating markers', async () => {
    failNext = 2;
    expect((await post({ service: 'checkout', kind: 'code', to_version: '2.0.0' })).status).toBe(
      201,
    );
    await waitFor(3, 25_000);
    expect(failNext).toBe(0);
    expect(received).toHaveLength(3);
    expect(received[2]!.body.text).toContain('checkout: code ? → 2.0.0');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /onset_grafana_annotations_total\{kind="deploy",result="http_error"\} [1-9]/,
    );
    expect(metrics).toMatch(/onset_grafana_annotations_total\{kind="deploy",result="success"\} 3/);
  });
});
