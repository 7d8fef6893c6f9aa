import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/db/embedded.ts';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.ts');
let dir: string;
let proc: ChildProcess | undefined;

afterAll(async () => {
  proc?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Start Onset the way `npm start` does (embedded PostgreSQL, no DATABASE_URL), without the agent. */
async function startMain(dataDir: string, port: number): Promise<{ proc: ChildProcess; output: () => string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ONSET_DATA_DIR: dataDir, ONSET_PORT: String(port), ONSET_OTLP_PORT: '0', ONSET_LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`onset exited early: ${out}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return { proc: child, output: () => out };
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`onset did not become ready: ${out}`);
}

const exited = (p: ChildProcess) => new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));

describe('npm start on the embedded database', () => {
  it('serves, shuts PostgreSQL down cleanly on SIGTERM and SIGINT, and keeps the data across restarts', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'onset-main-'));
    await chmod(dir, 0o755);
    const port = await freePort();
    const first = await startMain(path.join(dir, 'data'), port);
    proc = first.proc;
    const start = BigInt(Date.now() - 60_000) * 1_000_000n;
    const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'persisted' } }] },
          scopeSpans: [{ spans: [{ traceId: '1'.repeat(32), spanId: '2'.repeat(16), name: 'fsync', startTimeUnixNano: String(start), endTimeUnixNano: String(start + 1_000_000n) }] }] }],
      }),
    });
    expect(res.status).toBe(200);

    const code = exited(first.proc);
    first.proc.kill('SIGTERM');
    const c1 = await code;
    if (c1 !== 0) console.log(first.output());
    expect(c1).toBe(0);
    expect(first.output()).toMatch(/SIGTERM, shutting down/);
    // PostgreSQL stopped too: its pid file is gone.
    expect(existsSync(path.join(dir, 'data', 'pg', 'postmaster.pid'))).toBe(false);

    const second = await startMain(path.join(dir, 'data'), port);
    proc = second.proc;
    const list = (await (await fetch(`http://127.0.0.1:${port}/api/v1/series?service=persisted`)).json()) as { series: unknown[] };
    expect(list.series).toHaveLength(1);
    const code2 = exited(second.proc);
    second.proc.kill('SIGINT');
    expect(await code2).toBe(0);
    expect(existsSync(path.join(dir, 'data', 'pg', 'postmaster.pid'))).toBe(false);
    proc = undefined;
  });
});
