import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Deploy as Marker } from '@onset/contract';

// Tokens per scope, so auth is exercised the way CI hooks and admins use it.
const TOKENS = { deploys: 'tok-ci', read: 'tok-read', admin: 'tok-admin' };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: { ONSET_TOKENS: `deploys:${TOKENS.deploys},read:${TOKENS.read},admin:${TOKENS.admin}` },
  });
});
afterAll(async () => {
  await server?.close();
});

async function post(
  body: unknown,
  token = TOKENS.deploys,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${server.url}/api/v1/deploys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function list(query: string, token = TOKENS.read): Promise<Marker[]> {
  const res = await fetch(`${server.url}/api/v1/deploys${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { deploys: Marker[] }).deploys;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('POST /api/v1/deploys', () => {
  it('stores a service marker with every field and answers 201 with id and source api', async () => {
    const at = iso(Math.floor(Date.now() / 60_000) * 60_000 - 86_400_000);
    const { status, body } = await post({
      service: 'checkout',
      environment: 'prod',
      hosts: ['node-18', 'node-17'],
      kind: 'dependency',
      component: 'hyper',
      from_version: '0.12.35',
      to_version: '0.13.1',
      commit: '9f2c1e0',
      url: 'https://ci.example/run/881',
      description: 'bump hyper and tokio',
      at,
    });
    expect(status).toBe(201);
    expect(body.id).toMatch(/^\d+$/);
    expect(body).toMatchObject({
      service: 'checkout',
      environment: 'prod',
      hosts: ['node-17', 'node-18'],
      kind: 'dependency',
      component: 'hyper',
      from_version: '0.12.35',
      to_version: '0.13.1',
      commit: '9f2c1e0',
      url: 'https://ci.example/run/881',
      description: 'bump hyper and tokio',
      at,
      source: 'api',
    });
    const got = await fetch(`${server.url}/api/v1/deploys/${body.id}`, {
      headers: { authorization: `Bearer ${TOKENS.read}` },
    });
    expect(await got.json()).toEqual(body);
  });

  it('accepts a host-only kernel rollout, defaults at to now and component to kernel', async () => {
    const before = Date.now();
    const { status, body } = await post({
      hosts: ['db-1', 'db-2', 'db-1'],
      kind: 'kernel',
      from_version: '4.4.0-138',
      to_version: '4.15.0-36',
    });
    expect(status).toBe(201);
    expect(body.service).toBeNull();
    expect(body.hosts).toEqual(['db-1', 'db-2']);
    expect(body.component).toBe('kernel');
    expect(Date.parse(body.at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(body.at)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    [
      'unknown kind',
      { service: 'a', kind: 'yolo' },
      /kind must be one of code, dependency, kernel, config, infra/,
    ],
    ['missing kind', { service: 'a' }, /kind is required/],
    [
      'neither service nor hosts',
      { kind: 'code', to_version: '1.2' },
      /needs a "service", "hosts", or both/,
    ],
    [
      'blank service and empty hosts',
      { kind: 'code', service: '  ', hosts: [] },
      /needs a "service", "hosts", or both/,
    ],
    [
      'unparseable at',
      { service: 'a', kind: 'code', at: 'yesterday' },
      /at: "yesterday" is not an RFC 3339 time/,
    ],
    [
      'at without a timezone',
      { service: 'a', kind: 'code', at: '2026-01-01T10:00:00' },
      /not an RFC 3339 time with a timezone/,
    ],
    [
      'at more than a year ahead',
      { service: 'a', kind: 'code', at: iso(Date.now() + 400 * 86_400_000) },
      /more than a year away/,
    ],
    [
      'at more than a year ago',
      { service: 'a', kind: 'code', at: iso(Date.now() - 400 * 86_400_000) },
      /more than a year away/,
    ],
    [
      'javascript: url',
      { service: 'a', kind: 'code', url: 'javascript:alert(1)' },
      /only http and https links/,
    ],
    ['relative url', { service: 'a', kind: 'code', url: '/run/1' }, /not an absolute URL/],
    [
      'oversized description',
      { service: 'a', kind: 'code', description: 'x'.repeat(5000) },
      /description is too long \(at most 4096/,
    ],
    [
      'oversized service',
      { service: 's'.repeat(300), kind: 'code' },
      /service is too long \(at most 256/,
    ],
    [
      'oversized host name',
      { hosts: ['ok', 'h'.repeat(300)], kind: 'kernel' },
      /hosts\[1\] is too long/,
    ],
    [
      'too many hosts',
      { hosts: Array.from({ length: 1001 }, (_, i) => `h${i}`), kind: 'kernel' },
      /hosts has too many entries \(at most 1000\)/,
    ],
    ['a JSON array', [{ service: 'a', kind: 'code' }], /body must be a JSON object/],
  ];
  for (const [label, body, message] of bad) {
    it(`rejects ${label} with a clear 400`, async () => {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('bad_request');
      expect(r.body.message).toMatch(message);
    });
  }

  it('rejects malformed JSON with 400 and stays up', async () => {
    const r = await post('{"service": "a", "kind": ');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect((await post({ service: 'still-up', kind: 'config' })).status).toBe(201);
  });

  it('needs the deploys scope to post, read to list, admin to edit', async () => {
    const noToken = await fetch(`${server.url}/api/v1/deploys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noToken.status).toBe(401);
    expect((await post({ service: 'a', kind: 'code' }, TOKENS.read)).status).toBe(403);
    const listWithCi = await fetch(`${server.url}/api/v1/deploys`, {
      headers: { authorization: `Bearer ${TOKENS.deploys}` },
    });
    expect(listWithCi.status).toBe(403);
    const { body } = await post({ service: 'scoped', kind: 'code' });
    const patchWithCi = await fetch(`${server.url}/api/v1/deploys/${body.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.deploys}` },
      body: JSON.stringify({ description: 'nope' }),
    });
    expect(patchWithCi.status).toBe(403);
  });
});

describe('idempotency with external_id', () => {
  it('20 concurrent POSTs with one external_id make exactly one marker, and all answer its id', async () => {
    const body = {
      service: 'payments',
      kind: 'code',
      to_version: '2.4.0',
      commit: 'abc123',
      external_id: 'gh-run-7781-payments',
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    for (const a of answers) expect(a.status).toBe(201);
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    const stored = await list('?service=payments');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.id).toBe([...ids][0]);
  });

  it('the same external_id for a different deploy is a 409 naming the difference', async () => {
    const first = await post({
      service: 'search',
      kind: 'code',
      to_version: '1.0',
      external_id: 'ci-42',
    });
    expect(first.status).toBe(201);
    const clash = await post({
      service: 'search',
      kind: 'code',
      to_version: '1.1',
      external_id: 'ci-42',
    });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toMatch(
      /external_id "ci-42" already names marker \d+ with a different to_version/,
    );
    expect(await list('?service=search')).toHaveLength(1);
  });
});

describe('GET /api/v1/deploys filters', () => {
  it('filters by service, host, kind, source and time range, newest first', async () => {
    const base = Date.now() - 10 * 86_400_000;
    const made = [
      await post({ service: 'f-api', kind: 'code', at: iso(base), to_version: 'v1' }),
      await post({
        service: 'f-api',
        kind: 'config',
        at: iso(base + 3_600_000),
        description: 'raise pool size',
      }),
      await post({
        hosts: ['f-host-1', 'f-host-2'],
        kind: 'kernel',
        at: iso(base + 2 * 3_600_000),
        to_version: '6.1',
      }),
      await post({
        service: 'f-api',
        hosts: ['f-host-2'],
        kind: 'infra',
        at: iso(base + 3 * 3_600_000),
      }),
    ].map((r) => r.body as Marker);

    expect((await list('?service=f-api')).map((m) => m.id)).toEqual([
      made[3]!.id,
      made[1]!.id,
      made[0]!.id,
    ]);
    expect((await list('?host=f-host-2')).map((m) => m.id)).toEqual([made[3]!.id, made[2]!.id]);
    expect((await list('?host=f-host-1&kind=kernel')).map((m) => m.id)).toEqual([made[2]!.id]);
    expect((await list('?service=f-api&kind=config')).map((m) => m.description)).toEqual([
      'raise pool size',
    ]);
    const window = `?from=${iso(base + 30 * 60_000)}&to=${iso(base + 2 * 3_600_000)}`;
    expect((await list(window)).map((m) => m.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(await list('?service=f-api&source=inferred')).toEqual([]);
    expect(await list('?service=f-api&source=api')).toHaveLength(3);
  });

  it('rejects an unknown kind, a bad time and an inverted range with 400', async () => {
    for (const [q, msg] of [
      ['?kind=yolo', /kind must be one of/],
      ['?source=robot', /source must be one of api, inferred/],
      ['?from=someday', /from: "someday" is not an RFC 3339 time/],
      ['?from=now&to=now-1h', /"from" must not be after "to"/],
      ['?limit=lots', /limit must be an integer/],
      ['?limit=100000', /limit must be <= 5000/],
    ] as const) {
      const res = await fetch(`${server.url}/api/v1/deploys${q}`, {
        headers: { authorization: `Bearer ${TOKENS.read}` },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(msg);
    }
  });
});

describe('admin edits and deletes', () => {
  async function send(method: string, id: string, body?: unknown, token = TOKENS.admin) {
    const res = await fetch(`${server.url}/api/v1/deploys/${id}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  }

  it('moves a marker in time and rewrites its description, then deletes it', async () => {
    const { body } = await post({ service: 'edit-me', kind: 'code', to_version: '3.0' });
    const at = iso(Date.now() - 3_600_000);
    const edited = await send('PATCH', body.id, {
      at,
      description: 'actually rolled out an hour earlier',
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      id: body.id,
      at,
      description: 'actually rolled out an hour earlier',
      to_version: '3.0',
    });
    expect((await list('?service=edit-me'))[0]).toMatchObject({
      at,
      description: 'actually rolled out an hour earlier',
    });

    expect((await send('PATCH', body.id, { at: 'noon' })).status).toBe(400);
    expect((await send('PATCH', body.id, {})).body.message).toMatch(/nothing to change/);
    expect((await send('DELETE', body.id)).status).toBe(204);
    expect(await list('?service=edit-me')).toEqual([]);
    expect((await send('DELETE', body.id)).status).toBe(404);
    expect((await send('PATCH', body.id, { description: 'gone' })).status).toBe(404);
    expect((await send('PATCH', 'not-a-number', { description: 'x' })).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the deploy endpoints at /docs/json', async () => {
    const doc = (await (await fetch(`${server.url}/docs/json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/api/v1/deploys']!)).toEqual(
      expect.arrayContaining(['get', 'post']),
    );
    expect(Object.keys(doc.paths['/api/v1/deploys/{id}']!)).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
  });
});
