/**
 * Open mode (loopback, no tokens) against hostile web pages in real Chromium
 * (docs/security.md "Open mode and browsers"): a page on another loopback
 * origin (http://localhost:<other port>) tries every request a page can send
 * without a CORS preflight — fetch no-cors with text/plain, a form body or no
 * body, an HTML form with enctype=text/plain carrying JSON — plus a JSON fetch
 * (preflighted, never granted), to create a webhook and to acknowledge a
 * regression on http://127.0.0.1:<onset port>. Nothing may change. A DNS
 * rebinding page (attacker.example resolving to 127.0.0.1) gets 421 for the
 * UI and the API. The server's own pages still work.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression } from '@onset/contract';
import { sendIncidents } from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';

let server: TestServer;
let browser: Browser;
let attacker: http.Server;
let attackerOrigin: string;
let regression: Regression;

const json = { 'content-type': 'application/json' };

async function webhookCount(): Promise<number> {
  const r = await fetch(`${server.url}/api/v1/webhooks`);
  return ((await r.json()) as { webhooks: unknown[] }).webhooks.length;
}

async function regressionStatus(): Promise<string> {
  const r = await fetch(`${server.url}/api/v1/regressions/${regression.id}`);
  return ((await r.json()) as Regression).status;
}

/** Every response Chromium saw from Onset (real statuses, also for opaque no-cors answers). */
function onsetResponses(page: Page, onsetOrigin: string): string[] {
  const seen: string[] = [];
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.origin === onsetOrigin) seen.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
  });
  return seen;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startTestServer(),
    launchChromium(['--host-resolver-rules=MAP attacker.example 127.0.0.1']),
  ]);
  await sendIncidents({ apiUrl: server.url, otlpUrl: server.otlpUrl });
  const detect = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: json,
    body: '{}',
  });
  expect(detect.status).toBe(200);
  const list = (await (await fetch(`${server.url}/api/v1/regressions?status=open`)).json()) as {
    regressions: Regression[];
  };
  regression = list.regressions[0]!;
  expect(regression, 'an open regression to attack').toBeTruthy();

  attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>cat pictures</title><iframe name="sink"></iframe>');
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  attacker?.closeAllConnections();
  await new Promise((r) => attacker?.close(r));
});

describe('open mode against web pages', () => {
  it('a page on another origin cannot create a webhook or acknowledge a regression', async () => {
    const before = await webhookCount();
    const page = await browser.newPage();
    const seen = onsetResponses(page, server.url);
    await page.goto(attackerOrigin);
    const outcomes = await page.evaluate(
      async ({ onset, id }) => {
        const out: Record<string, string> = {};
        const hook = JSON.stringify({ url: 'https://exfil.example/steal', format: 'json' });
        const attempt = async (name: string, path: string, init: RequestInit) => {
          try {
            const r = await fetch(onset + path, init);
            out[name] = r.type === 'opaque' ? 'opaque' : String(r.status);
          } catch (e) {
            out[name] = `blocked: ${(e as Error).message}`;
          }
        };
        const simple = { method: 'POST', mode: 'no-cors' } as const;
        await attempt('webhook text/plain', '/api/v1/webhooks', {
          ...simple,
          headers: { 'content-type': 'text/plain' },
          body: hook,
        });
        await attempt('webhook form', '/api/v1/webhooks', {
          ...simple,
          body: new URLSearchParams({ url: 'https://exfil.example/steal' }),
        });
        await attempt('ack no body', `/api/v1/regressions/${id}/ack`, simple);
        await attempt('ack text/plain', `/api/v1/regressions/${id}/ack`, {
          ...simple,
          headers: { 'content-type': 'text/plain' },
          body: '{"by":"attacker"}',
        });
        await attempt('detect no body', '/api/v1/detect', simple);
        await attempt('webhook json (preflighted)', '/api/v1/webhooks', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: hook,
        });
        // The classic: an HTML form with enctype=text/plain whose body parses as JSON.
        const form = document.createElement('form');
        form.method = 'POST';
        form.enctype = 'text/plain';
        form.target = 'sink';
        form.action = `${onset}/api/v1/webhooks`;
        const input = document.createElement('input');
        input.name = '{"url":"https://exfil.example/form","format":"json","x":"';
        input.value = '"}';
        form.append(input);
        document.body.append(form);
        const loaded = new Promise((r) =>
          document.querySelector('iframe')!.addEventListener('load', r, { once: true }),
        );
        form.submit();
        await loaded;
        return out;
      },
      { onset: server.url, id: regression.id },
    );
    // The preflighted JSON request never leaves the browser; the simple ones are answered with refusals.
    expect(outcomes['webhook json (preflighted)']).toMatch(/^blocked/);
    expect(seen.sort()).toEqual(
      [
        'POST /api/v1/webhooks 403', // text/plain fetch
        'POST /api/v1/webhooks 403', // form fetch
        'POST /api/v1/webhooks 403', // HTML form
        `POST /api/v1/regressions/${regression.id}/ack 403`,
        `POST /api/v1/regressions/${regression.id}/ack 403`,
        'POST /api/v1/detect 403',
      ].sort(),
    );
    expect(await webhookCount()).toBe(before);
    expect(await regressionStatus()).toBe('open');
    await page.close();
  });

  it('the same requests without an Origin (as old browsers send) are refused by content type', async () => {
    // What the Origin check does not cover, the content-type rule does: a simple request has none of JSON's types.
    for (const [path, init] of [
      [
        '/api/v1/webhooks',
        { headers: { 'content-type': 'text/plain' }, body: '{"url":"https://x.example/"}' },
      ],
      [`/api/v1/regressions/${regression.id}/ack`, {}],
      [`/api/v1/regressions/${regression.id}/ack`, { body: new URLSearchParams({ by: 'x' }) }],
    ] as const) {
      const r = await fetch(`${server.url}${path}`, { method: 'POST', ...init });
      expect(r.status, path).toBe(415);
    }
    expect(await regressionStatus()).toBe('open');
  });

  it('DNS rebinding: attacker.example resolving to 127.0.0.1 gets 421 for the UI and the API', async () => {
    const port = new URL(server.url).port;
    const page = await browser.newPage();
    const ui = await page.goto(`http://attacker.example:${port}/`);
    expect(ui!.status()).toBe(421);
    const api = await page.evaluate(async () => {
      const r = await fetch('/api/v1/regressions');
      return { status: r.status, body: await r.text() };
    });
    expect(api.status).toBe(421);
    expect(api.body).not.toContain('"regressions"');
    expect(JSON.parse(api.body).error).toBe('misdirected_request');
    await page.close();
  });

  it("the server's own pages still work: the UI loads and a JSON POST from its origin acknowledges", async () => {
    const page = await browser.newPage();
    const ui = await page.goto(`${server.url}/`);
    expect(ui!.status()).toBe(200);
    const ack = await page.evaluate(async (id) => {
      const r = await fetch(`/api/v1/regressions/${id}/ack`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ by: 'engineer' }),
      });
      return r.status;
    }, regression.id);
    expect(ack).toBe(200);
    expect(await regressionStatus()).toBe('acknowledged');
    await page.close();
  });
});
