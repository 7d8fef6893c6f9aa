/**
 * The webhook egress policy (SSRF): every spelling of loopback, private,
 * link-local, CGNAT, metadata and unspecified addresses refused at
 * registration without an allowlist, the allowlist permitting exactly what it
 * lists, credentials in URLs refused, and at delivery: the host resolved
 * (through an injected resolver standing in for DNS) and the connection going
 * only to a checked address, also when the answer changes between
 * registration and delivery or between two deliveries (rebinding).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, LOOPBACK_WEBHOOK_ALLOW, type TestServer } from '@onset/testkit';
import { sendTestEvent } from '../src/webhooks/deliver.ts';
import { egressPolicy, type ResolvedAddress } from '../src/webhooks/egress.ts';
import { api, onlyWebhook } from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
const servers: http.Server[] = [];

interface Hit {
  path: string;
}

/** A receiver on a given loopback address, answering `status` (and headers) and recording requests. */
async function receiverOn(
  host: string,
  answer: { status?: number; headers?: Record<string, string>; body?: string } = {},
  port = 0,
) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({ path: req.url! });
      res.writeHead(answer.status ?? 200, answer.headers ?? { 'content-type': 'text/plain' });
      res.end(answer.body ?? 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(port, host, r));
  servers.push(server);
  return { hits, port: (server.address() as AddressInfo).port };
}

const setAllow = (v: string | undefined) => {
  if (v === undefined) delete process.env.ONSET_WEBHOOK_ALLOW;
  else process.env.ONSET_WEBHOOK_ALLOW = v;
};

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
});

afterEach(() => setAllow(LOOPBACK_WEBHOOK_ALLOW));

afterAll(async () => {
  await srv?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Loopback in every spelling the issue lists, and the URL parser's other shorthands. */
const LOOPBACK_URLS = [
  'http://127.0.0.1:5432/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://0177.0.0.1/',
  'http://127.000.000.001/',
  'http://[::1]:8080/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:127.0.0.1]/',
];
/** Never permitted by the loopback allowlist the tests use. */
const OTHER_FORBIDDEN_URLS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/latest/meta-data/', // 169.254.169.254 as one number
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.google.internal./computeMetadata/v1/',
  'http://100.100.100.200/', // Alibaba metadata, in CGNAT space
  'http://10.0.0.5/',
  'http://172.16.3.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://0.0.0.0/',
  'http://0/',
  'http://[::]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[64:ff9b::7f00:1]/', // NAT64 of 127.0.0.1
  'http://[2002:7f00:1::]/', // 6to4 of 127.0.0.1
  'http://224.0.0.1/',
  'http://255.255.255.255/',
];
const NAMES = ['http://localhost:8080/', 'http://api.localhost/'];

describe('registration', () => {
  it('refuses every forbidden address spelling and name when no allowlist is set', async () => {
    setAllow(undefined);
    for (const url of [...LOOPBACK_URLS, ...OTHER_FORBIDDEN_URLS, ...NAMES]) {
      const r = await A.post('/api/v1/webhooks', { url, format: 'json' });
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.message, url).toMatch(/egress policy/);
    }
    // PUT goes through the same check.
    setAllow(LOOPBACK_WEBHOOK_ALLOW);
    const id = await onlyWebhook(A, { url: 'http://127.0.0.1:1/hook', format: 'json' });
    setAllow(undefined);
    const put = await A.put(`/api/v1/webhooks/${id}`, { url: 'http://0x7f000001/' });
    expect(put.status).toBe(400);
  });

  it('with a loopback allowlist permits loopback spellings and nothing else', async () => {
    setAllow(LOOPBACK_WEBHOOK_ALLOW);
    for (const url of LOOPBACK_URLS) {
      const r = await A.post('/api/v1/webhooks', { url, format: 'json', enabled: false });
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(201);
    }
    for (const url of [...OTHER_FORBIDDEN_URLS, ...NAMES]) {
      const r = await A.post('/api/v1/webhooks', { url, format: 'json' });
      expect(r.status, url).toBe(400);
    }
  });

  it('an allowlisted CIDR or host name permits exactly that', async () => {
    setAllow('10.0.0.0/8, *.corp.example, localhost');
    for (const url of ['http://10.0.0.5/', 'http://localhost:9/', 'http://hooks.corp.example/'])
      expect((await A.post('/api/v1/webhooks', { url, enabled: false })).status, url).toBe(201);
    for (const url of ['http://192.168.1.1/', 'http://169.254.169.254/', 'http://127.0.0.1/'])
      expect((await A.post('/api/v1/webhooks', { url })).status, url).toBe(400);
  });

  it('refuses credentials in the URL and non-http schemes, with or without an allowlist', async () => {
    for (const allow of [undefined, LOOPBACK_WEBHOOK_ALLOW]) {
      setAllow(allow);
      for (const url of [
        'https://user:pass@hooks.example.com/x',
        'https://token@hooks.example.com/x',
        'http://user:pass@127.0.0.1/',
        'file:///etc/passwd',
        'gopher://127.0.0.1:5432/',
      ]) {
        const r = await A.post('/api/v1/webhooks', { url });
        expect(r.status, url).toBe(400);
      }
    }
    setAllow(undefined);
    const ok = await A.post('/api/v1/webhooks', {
      url: 'https://hooks.example.com/services/x',
      enabled: false,
    });
    expect(ok.status).toBe(201);
  });

  it('never returns the secret', async () => {
    const secret = 'very-secret-value-4c1e';
    const r = await A.post('/api/v1/webhooks', {
      url: 'https://hooks.example.com/s',
      secret,
      enabled: false,
    });
    expect(r.status).toBe(201);
    expect(r.body.has_secret).toBe(true);
    const list = await fetch(`${srv.url}/api/v1/webhooks`);
    const one = await fetch(`${srv.url}/api/v1/webhooks/${r.body.id}`);
    expect(JSON.stringify(r.body)).not.toContain(secret);
    expect(await list.text()).not.toContain(secret);
    expect(await one.text()).not.toContain(secret);
  });
});

describe('delivery', () => {
  /** A resolver whose answer the test changes, counting its calls. */
  function fakeDns(first: string[]) {
    let answer = first;
    const calls: string[] = [];
    const resolve = async (host: string): Promise<ResolvedAddress[]> => {
      calls.push(host);
      return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { resolve, calls, set: (a: string[]) => (answer = a) };
  }

  async function lastAttempt(webhookId: string) {
    const r = await A.get(`/api/v1/webhooks/${webhookId}/deliveries?limit=1`);
    const d = r.body.deliveries[0];
    return { status: d.status, code: d.last_status_code, error: d.last_error as string | null };
  }

  /**
   * A permitted receiver on 127.0.0.1 and a forbidden one on 127.0.0.2 (loopback too, but not
   * allowlisted) on the same port: a connection to the wrong address would be answered, so a
   * bypass shows up as a hit on `bad`.
   */
  async function receiverPair() {
    // Connection: close, so every delivery opens (and resolves for) a new connection.
    const headers = { 'content-type': 'text/plain', connection: 'close' };
    const good = await receiverOn('127.0.0.1', { headers });
    const bad = await receiverOn('127.0.0.2', { headers, body: 'pwned' }, good.port);
    return { good, bad, port: good.port };
  }

  it('connects only to checked addresses when DNS changes between registration and delivery', async () => {
    const { good, bad, port } = await receiverPair();
    setAllow(undefined);
    // Registration: a name, not resolved here; accepted.
    const id = await onlyWebhook(A, { url: `http://hooks.rebind.test:${port}/hook` });
    const dns = fakeDns(['127.0.0.1']);
    const send = () =>
      sendTestEvent(srv.onset.pool, id, {
        baseUrl: srv.url,
        timeoutMs: 3000,
        egress: egressPolicy('127.0.0.1/32', dns.resolve),
      });

    await send();
    expect(await lastAttempt(id)).toMatchObject({ status: 'delivered', code: 200 });
    expect(good.hits).toHaveLength(1);

    dns.set(['127.0.0.2']);
    await send();
    const refused = await lastAttempt(id);
    expect(refused.status).toBe('failed'); // final: a policy refusal is not retried
    expect(refused.code).toBeNull();
    expect(refused.error).toMatch(/127\.0\.0\.2 \(hooks\.rebind\.test\) is loopback/);

    // Mixed answers (one public, one forbidden) and IPv4-mapped IPv6 are refused too.
    for (const answer of [
      ['93.184.216.34', '127.0.0.2'],
      ['::ffff:127.0.0.2'],
      ['::ffff:7f00:2'],
    ]) {
      dns.set(answer);
      await send();
      expect((await lastAttempt(id)).error, answer.join()).toMatch(/is loopback/);
    }
    for (const answer of [['169.254.169.254'], ['fd00:ec2::254'], ['10.1.2.3'], ['0.0.0.0']]) {
      dns.set(answer);
      await send();
      expect((await lastAttempt(id)).error, answer.join()).toMatch(/egress policy/);
    }
    expect(bad.hits).toHaveLength(0);
    expect(good.hits).toHaveLength(1);
    expect(dns.calls).toHaveLength(9); // one resolution per connection, checked and used
  });

  it('rebinding: an answer alternating between permitted and forbidden never reaches the forbidden address', async () => {
    const { good, bad, port } = await receiverPair();
    setAllow(undefined);
    const id = await onlyWebhook(A, { url: `http://flip.rebind.test:${port}/h` });
    let n = 0;
    const egress = egressPolicy('127.0.0.1/32', async () => [
      { address: n++ % 2 ? '127.0.0.2' : '127.0.0.1', family: 4 },
    ]);
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      await sendTestEvent(srv.onset.pool, id, { baseUrl: srv.url, timeoutMs: 3000, egress });
      outcomes.push((await lastAttempt(id)).status);
    }
    expect(bad.hits).toHaveLength(0);
    expect(outcomes.filter((s) => s === 'delivered').length).toBeGreaterThan(0);
    expect(outcomes.filter((s) => s === 'failed').length).toBeGreaterThan(0);
    expect(good.hits.length).toBe(outcomes.filter((s) => s === 'delivered').length);
  });

  it('without the policy the same setup would reach the forbidden receiver (the test can fail)', async () => {
    const { bad, port } = await receiverPair();
    const r = await fetch(`http://127.0.0.2:${port}/direct`, { method: 'POST', body: '{}' });
    expect(await r.text()).toBe('pwned');
    expect(bad.hits).toHaveLength(1);
  });

  it('re-checks stored URLs at delivery (rows from before the policy) and does not follow redirects', async () => {
    setAllow(LOOPBACK_WEBHOOK_ALLOW);
    const target = await receiverOn('127.0.0.1');
    const redirector = await receiverOn('127.0.0.1', {
      status: 307,
      headers: { location: `http://127.0.0.1:${target.port}/stolen` },
    });
    const id = await onlyWebhook(A, { url: `http://127.0.0.1:${redirector.port}/hook` });
    await sendTestEvent(srv.onset.pool, id, { baseUrl: srv.url, timeoutMs: 3000 });
    expect(await lastAttempt(id)).toMatchObject({ status: 'failed', code: 307 });
    expect(redirector.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);

    // A row written before the policy existed, pointing at metadata and with credentials.
    for (const url of ['http://169.254.169.254/latest/', 'http://u:p@127.0.0.1:1/']) {
      await srv.onset.pool.query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [id, url]);
      await sendTestEvent(srv.onset.pool, id, { baseUrl: srv.url, timeoutMs: 3000 });
      const a = await lastAttempt(id);
      expect(a.status, url).toBe('failed');
      expect(a.error, url).toMatch(/egress policy|credentials/);
    }
  });

  it('stores a truncated, sanitised receiver answer', async () => {
    setAllow(LOOPBACK_WEBHOOK_ALLOW);
    const rx = await receiverOn('127.0.0.1', {
      status: 500,
      body: 'bad\u0000thing\u0007 ' + 'x'.repeat(3000),
    });
    const id = await onlyWebhook(A, { url: `http://127.0.0.1:${rx.port}/hook` });
    const deliveryId = await sendTestEvent(srv.onset.pool, id, {
      baseUrl: srv.url,
      timeoutMs: 3000,
    });
    expect(await lastAttempt(id)).toMatchObject({ status: 'failed', code: 500 });
    const { rows } = await srv.onset.pool.query<{ response: string }>(
      `SELECT response FROM webhook_attempts WHERE delivery_id = $1`,
      [deliveryId],
    );
    expect(rows[0]!.response.startsWith('bad\ufffdthing\ufffd x')).toBe(true);
    expect(rows[0]!.response.length).toBeLessThanOrEqual(500);
  });
});
