/**
 * `onset deploy verify` and `onset deploy --verify` as CI runs them: the
 * `onset` bin as a subprocess against a real server whose verdicts come from
 * real traffic (OTLP spans backfilled around each marker, so the judged
 * window is over and the verdict decided without waiting), and one marker
 * whose window is still open, to see --wait hold until it is decided.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Deploy, Verdict } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { sendDeployTraffic } from '@onset/testkit/deploy-traffic';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const ONSET = path.join(ROOT, 'node_modules/.bin/onset');
const TOKEN = 'tok-gate';
const MIN = 60_000;

let server: TestServer;
const deploys: Record<'pass' | 'fail' | 'thin', Deploy> = {} as never;

beforeAll(async () => {
  server = await startTestServer({ env: { ONSET_TOKENS: `ingest+deploys+read:${TOKEN}` } });
  // An hour ago: the judged window (10 min) ended long ago, the verdicts are final.
  const atMs = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
  const common = { apiUrl: server.url, otlpUrl: server.otlpUrl, token: TOKEN, atMs };
  deploys.pass = await sendDeployTraffic({ ...common, service: 'gate-pass', seed: 1 });
  deploys.fail = await sendDeployTraffic({ ...common, service: 'gate-fail', slowdown: 2, seed: 2 });
  // 10 calls a minute after the marker: 100 in the window, under min_count (300).
  deploys.thin = await sendDeployTraffic({
    ...common,
    service: 'gate-thin',
    callsPerMinuteAfter: 10,
    seed: 3,
  });
});
afterAll(async () => {
  await server?.close();
});

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
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      ONSET,
      args,
      {
        cwd: ROOT,
        env: cleanEnv({ ONSET_URL: server.url, ONSET_TOKEN: TOKEN, ...env }),
        timeout: 180_000,
      },
      (err, stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
          ms: Date.now() - started,
        }),
    );
  });
}

async function apiVerdict(id: string, query = ''): Promise<Verdict> {
  const res = await fetch(`${server.url}/api/v1/deploys/${id}/verdict${query}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Verdict;
}

describe('onset deploy verify (the CI gate)', () => {
  it('exits 0 on pass, 1 on fail, 2 on inconclusive, with the table of judged series on stdout', async () => {
    const [pass, fail, thin] = await Promise.all(
      (['pass', 'fail', 'thin'] as const).map((k) =>
        run(['deploy', 'verify', '--deploy', deploys[k].id, '--wait', '0s']),
      ),
    );
    expect(pass.code, pass.stderr).toBe(0);
    expect(fail.code, fail.stderr).toBe(1);
    expect(thin.code, thin.stderr).toBe(2);
    expect(pass.stdout).toContain(`deploy ${deploys.pass.id}: PASS`);
    expect(fail.stdout).toContain(`deploy ${deploys.fail.id}: FAIL`);
    expect(thin.stdout).toContain(`deploy ${deploys.thin.id}: INCONCLUSIVE`);

    // The failing row, as the API has it: its counts and its p50 ratio in the table.
    const v = await apiVerdict(deploys.fail.id);
    expect(v.verdict).toBe('fail');
    const row = v.series.find((s) => s.verdict === 'fail')!;
    expect(row.service).toBe('gate-fail');
    const line = fail.stdout
      .split('\n')
      .find((l) => l.startsWith('fail ') && l.includes('GET /cart'));
    expect(line, fail.stdout).toBeDefined();
    expect(line).toContain(`(${row.baseline.count})`);
    expect(line).toContain(`(${row.candidate.count})`);
    expect(line).toContain(`×${row.p50_ratio.value!.toFixed(2)}`);
    expect(row.p50_ratio.value!).toBeGreaterThan(1.5);
  });

  it('--inconclusive pass|fail maps an inconclusive verdict; --json prints the API answer', async () => {
    const id = deploys.thin.id;
    const [asPass, asFail, json] = await Promise.all([
      run(['deploy', 'verify', '--deploy', id, '--wait', '0s', '--inconclusive', 'pass']),
      run(['deploy', 'verify', '--deploy', id, '--wait', '0s', '--inconclusive', 'fail']),
      run(['deploy', 'verify', '--deploy', id, '--wait', '0s', '--json']),
    ]);
    expect(asPass.code).toBe(0);
    expect(asFail.code).toBe(1);
    expect(json.code).toBe(2);
    const printed = JSON.parse(json.stdout) as Verdict;
    const api = await apiVerdict(id);
    expect({ ...printed, evaluated_at: null }).toEqual({ ...api, evaluated_at: null });
    expect(printed.verdict).toBe('inconclusive');
  });

  it('finds the marker by its fields, and passes thresholds on to the server', async () => {
    const r = await run([
      'deploy',
      'verify',
      '--service',
      'gate-fail',
      '--environment',
      'prod',
      '--to-version',
      'gate-fail-v2',
      '--wait',
      '0s',
      '--p50-ratio',
      '3',
      '--p99-ratio',
      '3',
      '--json',
    ]);
    const v = JSON.parse(r.stdout) as Verdict;
    expect(v.deploy_id).toBe(deploys.fail.id);
    expect(v.thresholds).toMatchObject({ p50_ratio: 3, p99_ratio: 3 });
    // A ×2 slowdown does not reach ×3: no longer a fail.
    expect(v.verdict).not.toBe('fail');
    expect(r.code).toBe(v.verdict === 'pass' ? 0 : 2);
  });

  it('--wait holds until the verdict is decided; a wait that runs out while pending exits 3', async () => {
    // A 1-minute window, decided once its minute is over and settled (20 s): placed so that
    // happens 25-85 s from now, long enough to be pending at first and short enough to wait for.
    // At least 25 s: on a loaded machine the post, the first verdict and two CLI start-ups can
    // take over 15 s, and the 2 s wait must still see it pending.
    const now = Date.now();
    const atMs = Math.ceil((now - 55_000) / MIN) * MIN;
    const post = await fetch(`${server.url}/api/v1/deploys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        service: 'gate-wait',
        kind: 'config',
        at: new Date(atMs).toISOString(),
      }),
    });
    expect(post.status).toBe(201);
    const marker = (await post.json()) as Deploy;
    const pending = await apiVerdict(marker.id, '?window=1m');
    expect(pending.verdict).toBe('pending');

    const short = await run([
      'deploy',
      'verify',
      '--deploy',
      marker.id,
      '--window',
      '1m',
      '--wait',
      '2s',
    ]);
    expect(short.code, short.stderr).toBe(3);
    expect(short.ms).toBeGreaterThanOrEqual(2000);
    expect(short.stderr).toContain('still pending after --wait 2s');

    const long = await run([
      'deploy',
      'verify',
      '--deploy',
      marker.id,
      '--window',
      '1m',
      '--wait',
      '2m',
    ]);
    const decided = await apiVerdict(marker.id, '?window=1m');
    expect(decided.verdict).not.toBe('pending');
    // No calls at all: inconclusive, never a pass.
    expect(long.code, long.stderr).toBe(2);
    expect(long.stderr).toMatch(/verdict pending .* waiting up to/);
    // It answered once the window was over and settled, long before its own 2 minutes.
    expect(Date.parse(decided.decided_at!)).toBeGreaterThanOrEqual(
      Date.parse(pending.windows.candidate.to),
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(pending.windows.candidate.to));
    expect(long.ms).toBeLessThan(100_000);
  }, 150_000);

  it('onset deploy --verify posts the marker and waits for its verdict in one step', async () => {
    const r = await run([
      'deploy',
      '--service',
      'gate-pass',
      '-e',
      'prod',
      '--kind',
      'config',
      '--at',
      deploys.pass.at,
      '--verify',
      '--wait',
      '0s',
      '--json',
    ]);
    const v = JSON.parse(r.stdout) as Verdict;
    expect(r.stderr).toContain('recorded marker');
    expect(v.deploy_id).not.toBe(deploys.pass.id);
    expect(v.verdict).toBe('pass');
    expect(r.code).toBe(0);
  });

  it('no verdict is never read as one: unknown marker, bad flags, wrong token exit 3', async () => {
    const [unknown, badWait, noDeploy, badToken, nothing] = await Promise.all([
      run(['deploy', 'verify', '--deploy', '999999', '--wait', '0s']),
      run(['deploy', 'verify', '--deploy', deploys.pass.id, '--wait', 'soon']),
      run(['deploy', 'verify', '--deploy', 'abc']),
      run(['deploy', 'verify', '--deploy', deploys.pass.id, '--wait', '0s'], {
        ONSET_TOKEN: 'wrong',
      }),
      run(['deploy', 'verify', '--service', 'never-deployed', '--wait', '0s']),
    ]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('(404 not_found): deploy marker 999999 does not exist');
    expect(badWait.code).toBe(3);
    expect(badWait.stderr).toContain('--wait must be a duration like 90s, 15m or 1h (got "soon")');
    expect(noDeploy.code).toBe(3);
    expect(noDeploy.stderr).toContain('--deploy must be a marker id');
    expect(badToken.code).toBe(3);
    expect(badToken.stderr).toContain('(401 unauthorized): invalid token');
    expect(nothing.code).toBe(3);
    expect(nothing.stderr).toContain(
      'no deploy marker in the last 30 days matches service never-deployed',
    );
  });
});
