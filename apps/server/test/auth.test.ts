import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import Fastify from 'fastify';
import { authPlugin } from '../src/auth/plugin.ts';
import { ConfigError, loadConfig } from '../src/config.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: { ONSET_TOKENS: 'ingest:agent-token,read:viewer-token,admin:root-token' },
  });
});
afterAll(async () => {
  await server?.close();
});

const traces = JSON.stringify({ resourceSpans: [] });

describe('bearer tokens and scopes', () => {
  it('refuses OTLP without a token (401) and with a token lacking the ingest scope (403)', async () => {
    const none = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: traces,
    });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'unauthorized' });
    const wrong = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer viewer-token' },
      body: traces,
    });
    expect(wrong.status).toBe(403);
    const bad = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
      body: traces,
    });
    expect(bad.status).toBe(401);
  });

  it('accepts the ingest token for OTLP and admin for everything', async () => {
    for (const token of ['agent-token', 'root-token']) {
      const ok = await fetch(`${server.otlpUrl}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: traces,
      });
      expect(ok.status).toBe(200);
    }
  });

  it('guards the read API with the read scope', async () => {
    expect((await fetch(`${server.url}/api/v1/series`)).status).toBe(401);
    expect(
      (
        await fetch(`${server.url}/api/v1/series`, {
          headers: { authorization: 'Bearer agent-token' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await fetch(`${server.url}/api/v1/series`, {
          headers: { authorization: 'Bearer viewer-token' },
        })
      ).status,
    ).toBe(200);
  });

  it('refuses every anonymous API request with 401 before looking at its query or body', async () => {
    const guarded = Object.keys(operations).filter((k) => k.includes(' /api/'));
    expect(guarded.length).toBeGreaterThan(30);
    for (const key of guarded) {
      const [method, path] = key.split(' ') as [string, string];
      // Every part of this request is wrong: an id that is no id, a query that fails validation, a body that is not JSON.
      const url = `${server.url}${path.replace(/:\w+/g, 'not-an-id')}?limit=-1&op=nope&status=bogus&objective=7`;
      const hasBody = method !== 'GET' && method !== 'DELETE';
      const res = await fetch(url, {
        method,
        ...(hasBody ? { headers: { 'content-type': 'application/json' }, body: '{not json' } : {}),
      });
      expect({ key, status: res.status }).toEqual({ key, status: 401 });
      expect(await res.json()).toMatchObject({ error: 'unauthorized' });
    }
    const otlp = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: 'garbage',
    });
    expect(otlp.status).toBe(401);
  });

  it('checks the scope before the body: a read token posting a bad deploy marker gets 403', async () => {
    const res = await fetch(`${server.url}/api/v1/deploys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer viewer-token' },
      body: '{"kind":"nonsense"}',
    });
    expect(res.status).toBe(403);
  });

  it('refuses to register an API route that names no scope', async () => {
    const app = Fastify();
    await app.register(authPlugin, { tokens: new Map() });
    expect(() => app.get('/api/v1/forgotten', async () => ({}))).toThrow(/names no auth scope/);
    app.get('/api/v1/guarded', { config: { scope: 'read' } }, async () => ({}));
    await app.close();
  });

  it('health endpoints stay open for load balancers', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe('binding beyond loopback', () => {
  it('refuses to start on a non-loopback address without tokens', () => {
    expect(() => loadConfig({ ONSET_HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ONSET_HOST: '0.0.0.0' })).toThrow(/ONSET_TOKENS/);
  });
  it('starts on a non-loopback address once tokens are set, and on loopback without', () => {
    expect(loadConfig({ ONSET_HOST: '0.0.0.0', ONSET_TOKENS: 'admin:x' }).tokens.size).toBe(1);
    expect(loadConfig({}).host).toBe('127.0.0.1');
  });
  it('rejects malformed token specs with a message naming the problem', () => {
    expect(() => loadConfig({ ONSET_TOKENS: 'root:abc' })).toThrow(/unknown scope "root"/);
    expect(() => loadConfig({ ONSET_TOKENS: 'justatoken' })).toThrow(/scope\[\+scope\]:token/);
  });
});
