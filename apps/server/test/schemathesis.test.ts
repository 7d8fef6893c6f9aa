/**
 * schemathesis (from PyPI, in a venv this test makes: schemathesis/venv.ts)
 * generates requests from /docs/json and sends them to a real server on the
 * embedded PostgreSQL, seeded with the incident traffic so ids and series
 * exist. Any 5xx, any status code the document does not declare, any
 * schema-valid request refused or schema-violating request accepted fails
 * the test. Bounded: few examples per operation and a fixed seed, so a run
 * is the same run every time.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { sendIncidents } from '@onset/testkit/incidents';
import { schemathesisBin } from './schemathesis/venv.ts';

const CONFIG = fileURLToPath(new URL('./schemathesis/schemathesis.toml', import.meta.url));

const TOKEN = 'schemathesis-admin-token';
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'positive_data_acceptance',
  'negative_data_rejection',
];

let server: TestServer;
let st: string;
beforeAll(async () => {
  st = await schemathesisBin();
  server = await startTestServer({ env: { ONSET_TOKENS: `admin:${TOKEN}` } });
  await sendIncidents({ otlpUrl: server.otlpUrl, apiUrl: server.url, token: TOKEN });
}, 600_000);
afterAll(async () => {
  await server?.close();
});

/** Run `st` to completion; its exit code and everything it printed. */
function runSchemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Run in the venv's directory: schemathesis keeps a cache in its working directory.
    const child = spawn(st, ['--config-file', CONFIG, ...args], {
      cwd: path.dirname(path.dirname(st)),
      env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_HOOKS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('schemathesis over /docs/json', () => {
  it(
    'finds no 5xx, undocumented status code or schema mismatch',
    { timeout: 600_000 },
    async () => {
      const { code, output } = await runSchemathesis([
        'run',
        `${server.url}/docs/json`,
        '--url',
        server.url,
        '--header',
        `Authorization: Bearer ${TOKEN}`,
        '--checks',
        CHECKS.join(','),
        '--max-examples',
        process.env.ONSET_SCHEMATHESIS_EXAMPLES ?? '10',
        '--seed',
        '20261124',
        // One worker: CI has two cores, and the server and PostgreSQL need them.
        '--workers',
        '1',
        // OTLP ingest has its own fuzz test: protobuf and OTLP JSON bodies are not described by
        // a JSON schema in the document (the routes declare their answers only).
        '--exclude-path-regex',
        '^/v1/',
        // POST /api/v1/detect runs a whole detection pass before it answers: on a busy 2-core
        // machine that took longer than schemathesis's default 10 s. What is checked here is the
        // answer, not its speed (speed has its benchmarks).
        '--request-timeout',
        '60',
        '--no-shrink',
        '--suppress-health-check',
        'all',
      ]);
      // Only a digest on success: schemathesis ends with a pytest-style rule ("== 2 warnings in
      // 64s ==") that CI, reading the log's runner lines, took for a pytest run of no test.
      const cases = /Test cases:\s*\n\s*(.+)/.exec(output)?.[1]?.trim() ?? 'no case count';
      console.log(`schemathesis (seed 20261124): ${cases}`);
      expect(output).toMatch(/API Operations/);
      expect(code, output.slice(-8000)).toBe(0);
    },
  );
});
