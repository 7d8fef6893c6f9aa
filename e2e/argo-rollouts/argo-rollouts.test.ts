/**
 * Argo Rollouts' own web metric provider against a real Onset: the
 * AnalysisTemplate copied from docs/deploy-markers.md ("Argo Rollouts") is run
 * by main.go, which uses argo-rollouts' metricproviders/webmetric (the HTTP
 * call and the jsonPath) and utils/evaluate (successCondition /
 * failureCondition) as the Rollouts controller does. A deploy that made
 * latency worse must give Argo's phase Failed, an unchanged one Successful,
 * one with too few calls Inconclusive.
 *
 * The Go build is cached by Go itself (GOCACHE, GOMODCACHE defaults); a cold
 * build here takes ~2.5 min and ~45 modules. Its output is shown only when
 * something fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Deploy } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { sendDeployTraffic } from '@onset/testkit/deploy-traffic';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DOC = path.resolve(HERE, '../../docs/deploy-markers.md');
const GO =
  process.env.GO ?? ['/usr/local/go/bin/go', '/usr/bin/go'].find((p) => existsSync(p)) ?? null;
const missing = GO ? null : 'needs Go (/usr/local/go/bin/go, or GO=path)';
if (missing) console.warn(`argo-rollouts.test.ts skipped: ${missing}`);

const TOKEN = 'tok-argo';
const MIN = 60_000;

function exec(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { ...opts, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The AnalysisTemplate block of the doc, as a reader would copy it. */
function docTemplate(): string {
  const blocks = [...readFileSync(DOC, 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map(
    (m) => m[1]!,
  );
  const t = blocks.find((b) => /^kind: AnalysisTemplate$/m.test(b));
  if (!t) throw new Error(`${DOC}: no yaml block with kind: AnalysisTemplate`);
  return t;
}

let server: TestServer;
let work: string;
let bin: string;
let buildMs = 0;
const deploys: Record<'pass' | 'fail' | 'thin', Deploy> = {} as never;

beforeAll(async () => {
  if (missing) return;
  work = mkdtempSync(path.join(os.tmpdir(), 'onset-argo-'));
  bin = path.join(work, 'argo-web-analysis');
  const started = Date.now();
  const [build, s] = await Promise.all([
    exec(GO!, ['build', '-o', bin, '.'], {
      cwd: HERE,
      env: { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
      timeout: 540_000,
    }),
    startTestServer({ env: { ONSET_TOKENS: `ingest+deploys+read:${TOKEN}` } }),
  ]);
  server = s;
  buildMs = Date.now() - started;
  if (build.code !== 0)
    throw new Error(`go build in ${HERE} failed (${build.code}):\n${build.stdout}${build.stderr}`);
  writeFileSync(path.join(work, 'analysis.yaml'), docTemplate());
  const atMs = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
  const common = { apiUrl: server.url, otlpUrl: server.otlpUrl, token: TOKEN, atMs };
  deploys.pass = await sendDeployTraffic({ ...common, service: 'argo-pass', seed: 11 });
  deploys.fail = await sendDeployTraffic({
    ...common,
    service: 'argo-fail',
    slowdown: 2,
    seed: 12,
  });
  deploys.thin = await sendDeployTraffic({
    ...common,
    service: 'argo-thin',
    callsPerMinuteAfter: 10,
    seed: 13,
  });
}, 600_000);

afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  if (!missing)
    console.log(
      `argo-rollouts: go build ${(buildMs / 1000).toFixed(1)} s (cached after the first)`,
    );
});

interface Report {
  phase: string;
  metrics: Array<{ name: string; phase: string; value: string; message?: string }>;
}

async function analyse(deployId: string): Promise<Report> {
  const r = await exec(
    bin,
    [
      '-template',
      path.join(work, 'analysis.yaml'),
      '-arg',
      `onset-url=${server.url}`,
      '-arg',
      `deploy-id=${deployId}`,
      '-arg',
      `onset-token=${TOKEN}`,
    ],
    { timeout: 60_000 },
  );
  if (r.code !== 0) throw new Error(`argo-web-analysis exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Report;
}

describe.skipIf(missing)('Argo Rollouts AnalysisTemplate (web provider) against Onset', () => {
  it('a deploy that made latency worse is Failed, an unchanged one Successful, a thin one Inconclusive', async () => {
    const [fail, pass, thin] = await Promise.all([
      analyse(deploys.fail.id),
      analyse(deploys.pass.id),
      analyse(deploys.thin.id),
    ]);
    expect(fail, JSON.stringify(fail)).toMatchObject({
      phase: 'Failed',
      metrics: [{ name: 'onset-verdict', phase: 'Failed', value: '"fail"' }],
    });
    expect(pass, JSON.stringify(pass)).toMatchObject({
      phase: 'Successful',
      metrics: [{ phase: 'Successful', value: '"pass"' }],
    });
    expect(thin, JSON.stringify(thin)).toMatchObject({
      phase: 'Inconclusive',
      metrics: [{ phase: 'Inconclusive', value: '"inconclusive"' }],
    });
  });

  it('a wrong token is an Error measurement (Argo retries it), never a verdict', async () => {
    const r = await exec(
      bin,
      [
        '-template',
        path.join(work, 'analysis.yaml'),
        '-arg',
        `onset-url=${server.url}`,
        '-arg',
        `deploy-id=${deploys.fail.id}`,
        '-arg',
        'onset-token=wrong',
      ],
      { timeout: 60_000 },
    );
    const report = JSON.parse(r.stdout) as Report;
    expect(report.phase).toBe('Error');
    expect(report.metrics[0]!.message).toContain('received non 2xx response code: 401');
  });
});
