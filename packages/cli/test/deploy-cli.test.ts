import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '@onset/testkit';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
/** The bin link `npm install` creates: what `npx onset` runs. */
const ONSET = path.join(ROOT, 'node_modules/.bin/onset');
const fx = (p: string) => path.join(HERE, 'fixtures', p);
const TOKEN = 'tok-ci';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { ONSET_TOKENS: `deploys+read:${TOKEN}` } });
});
afterAll(async () => {
  await server?.close();
});

/** The test's own environment minus anything CI- or Onset-specific, so runs on a CI machine behave the same. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(GITHUB_|GITLAB_|CI_|BUILDKITE|JENKINS_|BUILD_|GIT_COMMIT|ONSET_)/.test(k) && k !== 'CI')
      env[k] = v;
  return { ...env, ...extra };
}

function run(
  args: string[],
  env: Record<string, string> = {},
  cmd = ONSET,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      {
        cwd: ROOT,
        env: cleanEnv({ ONSET_URL: server.url, ONSET_TOKEN: TOKEN, ...env }),
        timeout: 30_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

interface Marker {
  id: string;
  service: string | null;
  environment: string | null;
  hosts: string[];
  kind: string;
  component: string | null;
  from_version: string | null;
  to_version: string | null;
  commit: string | null;
  url: string | null;
  description: string | null;
  at: string;
  source: string;
}

async function markers(query: string): Promise<Marker[]> {
  const res = await fetch(`${server.url}/api/v1/deploys${query}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { deploys: Marker[] }).deploys;
}

const byComponent = (ms: Marker[]) =>
  ms
    .map((m) => ({ component: m.component, from: m.from_version, to: m.to_version }))
    .sort((a, b) => (a.component! < b.component! ? -1 : 1));

const GITHUB = {
  GITHUB_ACTIONS: 'true',
  GITHUB_SHA: '9f2c1e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a69',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_REPOSITORY: 'acme/storefront',
  GITHUB_RUN_ID: '8812345',
};

describe('onset deploy as a subprocess against a running server', () => {
  it('--lockfile-diff on a real package-lock.json pair sends one dependency marker per changed package, with commit and url from GitHub Actions; a CI retry adds nothing', async () => {
    const args = [
      'deploy',
      '--service',
      'storefront',
      '-e',
      'prod',
      '--lockfile-diff',
      fx('npm/before/package-lock.json'),
      fx('npm/after/package-lock.json'),
    ];
    const r = await run(args, GITHUB);
    expect(r.stderr).toContain('recorded marker');
    expect(r.code).toBe(0);
    const got = await markers('?service=storefront');
    expect(byComponent(got)).toEqual([
      { component: 'body-parser', from: '1.20.1', to: '1.20.2' },
      { component: 'express', from: '4.18.2', to: '4.19.2' },
      { component: 'left-pad', from: '1.3.0', to: null },
      { component: 'pg', from: '8.11.3', to: '8.12.0' },
      { component: 'pg-protocol', from: '1.6.0', to: '1.6.1' },
      { component: 'undici', from: null, to: '6.6.2' },
    ]);
    for (const m of got)
      expect(m).toMatchObject({
        kind: 'dependency',
        environment: 'prod',
        source: 'api',
        commit: GITHUB.GITHUB_SHA,
        url: 'https://github.com/acme/storefront/actions/runs/8812345',
      });
    expect(got.find((m) => m.component === 'express')!.description).toBe(
      'package-lock.json: express 4.18.2 → 4.19.2',
    );

    // The job is retried: same run, same lockfiles -> the same markers, not new ones.
    const again = await run(args, GITHUB);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already recorded as marker');
    expect(await markers('?service=storefront')).toHaveLength(6);
  });

  it('--lockfile-diff on a real Cargo.lock pair names the hyper 0.12.35 -> 0.13.1 bump', async () => {
    const r = await run([
      'deploy',
      '-s',
      'urlite',
      '--json',
      '--lockfile-diff',
      fx('cargo/before/Cargo.lock'),
      fx('cargo/after/Cargo.lock'),
    ]);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout) as Marker[];
    expect(printed).toHaveLength(9);
    const stored = await markers('?service=urlite&kind=dependency');
    expect(byComponent(stored)).toEqual(byComponent(printed));
    expect(stored.find((m) => m.component === 'hyper')).toMatchObject({
      from_version: '0.12.35',
      to_version: '0.13.1',
    });
    expect(stored.find((m) => m.component === 'tokio')).toMatchObject({
      from_version: '0.1.22',
      to_version: '0.2.6',
    });
    expect(stored.find((m) => m.component === 'urlite')).toBeUndefined();
  });

  it('a plain code deploy with every flag, from GitLab CI', async () => {
    const AT = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 2 * 86_400_000).toISOString();
    const r = await run(
      [
        'deploy',
        '--kind',
        'code',
        '--service',
        'checkout',
        '--host',
        'node-17,node-18',
        '--host',
        'node-19',
        '--to-version',
        '2.4.1',
        '--from-version',
        '2.4.0',
        '-m',
        'release 2.4.1',
        '--at',
        AT,
      ],
      {
        GITLAB_CI: 'true',
        CI_COMMIT_SHA: 'b7e1f00',
        CI_JOB_URL: 'https://gitlab.example/acme/checkout/-/jobs/4411',
        CI_PROJECT_ID: '12',
        CI_PIPELINE_ID: '903',
        CI_ENVIRONMENT_NAME: 'staging',
      },
    );
    expect(r.code).toBe(0);
    const [m] = await markers('?service=checkout');
    expect(m).toMatchObject({
      kind: 'code',
      hosts: ['node-17', 'node-18', 'node-19'],
      from_version: '2.4.0',
      to_version: '2.4.1',
      description: 'release 2.4.1',
      at: AT,
      commit: 'b7e1f00',
      url: 'https://gitlab.example/acme/checkout/-/jobs/4411',
      environment: 'staging',
    });
  });

  it('--kernel records uname -r for this host', async () => {
    const r = await run(['deploy', '--kernel', '--from-version', '4.4.0-138']);
    expect(r.code).toBe(0);
    const got = await markers(`?kind=kernel&host=${encodeURIComponent(os.hostname())}`);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      hosts: [os.hostname()],
      component: 'kernel',
      from_version: '4.4.0-138',
      to_version: os.release(),
      service: null,
    });
  });

  it('--dry-run prints what it would send and sends nothing (also through npx)', async () => {
    const r = await run(
      ['onset', 'deploy', '-s', 'dry', '-k', 'config', '-m', 'raise pool size', '--dry-run'],
      {},
      'npx',
    );
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({
      service: 'dry',
      kind: 'config',
      description: 'raise pool size',
    });
    expect(body[0]!.external_id).toMatch(/^cli-[0-9a-f]{40}$/);
    expect(r.stdout).not.toContain(TOKEN);
    expect(await markers('?service=dry')).toEqual([]);
  });

  it('a 4xx from the server exits non-zero with its message, and a bad token says so', async () => {
    const far = new Date(Date.now() + 2 * 365 * 86_400_000).toISOString();
    const r = await run(['deploy', '-s', 'far', '-k', 'code', '--at', far]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /server refused the marker \(400 bad_request\): at: .* is more than a year away/,
    );
    expect(await markers('?service=far')).toEqual([]);

    const auth = await run(['deploy', '-s', 'far', '-k', 'code'], { ONSET_TOKEN: 'wrong' });
    expect(auth.code).toBe(1);
    expect(auth.stderr).toContain('server refused the marker (401 unauthorized): invalid token');
  });

  it('bad invocations and unreadable lockfiles exit 2 naming the problem, before sending anything', async () => {
    // Independent invocations: run them side by side to keep the suite quick.
    const [lock, cargo, kind, nothing, js] = await Promise.all([
      run([
        'deploy',
        '-s',
        'broken',
        '--lockfile-diff',
        fx('npm/before/package-lock.json'),
        fx('broken/package-lock.json'),
      ]),
      run([
        'deploy',
        '-s',
        'broken',
        '--lockfile-diff',
        fx('cargo/before/Cargo.lock'),
        fx('broken/Cargo.lock'),
      ]),
      run(['deploy', '-s', 'broken', '--kind', 'yolo']),
      run(['deploy', '--kind', 'code']),
      run(['deploy', '-s', 'broken', '-k', 'code', '--url', 'javascript:alert(1)']),
    ]);
    expect(lock.code).toBe(2);
    expect(lock.stderr).toMatch(/broken\/package-lock\.json:30:7: invalid JSON: comma expected/);
    expect(cargo.code).toBe(2);
    expect(cargo.stderr).toMatch(/broken\/Cargo\.lock:17:14: invalid TOML/);
    expect(kind.code).toBe(2);
    expect(kind.stderr).toMatch(/Allowed choices are code, dependency, kernel, config, infra/);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('a marker needs --service, --host, or both');
    expect(js.code).toBe(2);
    expect(js.stderr).toContain('--url must be an http(s) link');
    expect(await markers('?service=broken')).toEqual([]);
  });

  it('retries 503 and 429 answers and records the marker once', async () => {
    let posts = 0;
    // In front of the real server: the first two POSTs meet an overloaded server.
    const proxy = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.method === 'POST' && ++posts <= 2) {
        res.writeHead(posts === 1 ? 503 : 429, {
          'content-type': 'application/json',
          'retry-after': '0',
        });
        res.end(JSON.stringify({ error: 'unavailable', message: 'try again' }));
        return;
      }
      const upstream = await fetch(server.url + req.url, {
        method: req.method,
        headers: {
          'content-type': req.headers['content-type'] ?? '',
          authorization: req.headers.authorization ?? '',
        },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
      });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const r = await run(['deploy', '-s', 'flaky', '-k', 'infra', '--server', url]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/503 unavailable: try again; retrying/);
      expect(r.stderr).toMatch(/429 unavailable: try again; retrying/);
      expect(posts).toBe(3);
      expect(await markers('?service=flaky')).toHaveLength(1);
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });
});
