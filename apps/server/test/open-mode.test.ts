/**
 * Open-mode browser checks at the HTTP level (auth/browser.ts): which Host
 * names are served, Origin on state changes, JSON content type for POSTs
 * without a token, and what stays as it was: OTLP ingest in protobuf and
 * JSON, token mode (any Host, token instead of content type).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';

let open: TestServer;
let tokens: TestServer;

/** A raw request, so Host can be anything (fetch does not let it be set). */
function raw(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

beforeAll(async () => {
  [open, tokens] = await Promise.all([
    startTestServer({ env: { ONSET_ALLOWED_HOSTS: 'onset.lan, box:9999' } }),
    startTestServer({ env: { ONSET_TOKENS: 'admin:tok-admin-5d1e' } }),
  ]);
});

afterAll(async () => {
  await open?.close();
  await tokens?.close();
});

describe('Host', () => {
  it('serves the loopback names and configured names, refuses others with 421', async () => {
    const port = new URL(open.url).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST.:${port}`,
      `[::1]:${port}`,
      'onset.lan',
      'box:9999',
    ]) {
      const r = await raw(open.url, '/api/v1/regressions', { headers: { host } });
      expect(r.status, host).toBe(200);
    }
    for (const host of [
      'attacker.example',
      `attacker.example:${port}`,
      '127.0.0.1.nip.io',
      'localhost.attacker.example',
    ]) {
      const r = await raw(open.url, '/api/v1/regressions', { headers: { host } });
      expect(r.status, host).toBe(421);
      expect(JSON.parse(r.body).error).toBe('misdirected_request');
    }
    // The UI shell and the OTLP listener too.
    expect((await raw(open.url, '/', { headers: { host: 'attacker.example' } })).status).toBe(421);
    const otlp = await raw(open.otlpUrl, '/v1/traces', {
      method: 'POST',
      headers: { host: 'attacker.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(otlp.status).toBe(421);
  });

  it('with tokens any Host is served (the token is the protection)', async () => {
    const r = await raw(tokens.url, '/api/v1/regressions', {
      headers: { host: 'onset.example.com', authorization: 'Bearer tok-admin-5d1e' },
    });
    expect(r.status).toBe(200);
  });
});

describe('state changes', () => {
  const post = (base: string, path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers, body });

  it('refuses another Origin with 403 and accepts its own', async () => {
    const body = JSON.stringify({ url: 'https://hooks.example.com/a', enabled: false });
    const ct = { 'content-type': 'application/json' };
    const port = new URL(open.url).port;
    for (const origin of [
      'http://attacker.example',
      `http://localhost:${port}`, // another origin than 127.0.0.1:port
      'http://127.0.0.1:1',
      'null',
    ]) {
      const r = await post(open.url, '/api/v1/webhooks', { ...ct, origin }, body);
      expect(r.status, origin).toBe(403);
    }
    expect(
      (await post(open.url, '/api/v1/webhooks', { ...ct, origin: open.url }, body)).status,
    ).toBe(201);
    // No Origin: not a page (CLI, agent, SDKs).
    expect((await post(open.url, '/api/v1/webhooks', ct, body)).status).toBe(201);
    // DELETE is a state change too.
    const del = await fetch(`${open.url}/api/v1/webhooks/1`, {
      method: 'DELETE',
      headers: { origin: 'http://attacker.example' },
    });
    expect(del.status).toBe(403);
  });

  it('a POST without a token needs a non-simple content type (415 otherwise)', async () => {
    for (const headers of <Record<string, string>[]>[
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'text/plain;charset=UTF-8' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'multipart/form-data; boundary=x' },
    ]) {
      const r = await post(
        open.url,
        '/api/v1/detect',
        headers,
        headers['content-type'] ? '{}' : undefined,
      );
      expect(r.status, JSON.stringify(headers)).toBe(415);
      expect((await r.json()).message).toMatch(/application\/json/);
    }
    const ok = await post(open.url, '/api/v1/detect', { 'content-type': 'application/json' }, '{}');
    expect(ok.status).toBe(200);
    // With a token, the token is enough: token mode's body-less POSTs keep working.
    const withToken = await post(tokens.url, '/api/v1/detect', {
      authorization: 'Bearer tok-admin-5d1e',
    });
    expect(withToken.status).toBe(200);
    // And without one, token mode answers 401 first.
    expect((await post(tokens.url, '/api/v1/detect', {})).status).toBe(401);
  });

  it('OTLP ingest keeps accepting protobuf and JSON in open mode', async () => {
    const pb = await post(open.otlpUrl, '/v1/traces', { 'content-type': 'application/x-protobuf' });
    expect(pb.status).toBe(200);
    const js = await post(open.otlpUrl, '/v1/traces', { 'content-type': 'application/json' }, '{}');
    expect(js.status).toBe(200);
  });
});
