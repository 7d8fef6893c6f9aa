import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { freePort } from '@onset/server/embedded-postgres';

/** An Onset server in a process of its own (as one of several behind a load balancer). */
export interface ServerProcess {
  url: string;
  otlpUrl: string;
  proc: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output: () => string;
}

const MAIN = createRequire(import.meta.url).resolve('@onset/server/main');

/**
 * Start `apps/server/src/main.ts` on free loopback ports against `databaseUrl`
 * and wait until /readyz answers; `env` adds or overrides settings. Tests that
 * need several real servers on one database (shards, shared sampling) use this
 * rather than startTestServer, which runs inside the test's own process.
 */
export async function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const otlpPort = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      ONSET_PORT: String(port),
      ONSET_OTLP_PORT: String(otlpPort),
      ONSET_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`onset exited early: ${out}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, otlpUrl: `http://127.0.0.1:${otlpPort}`, proc, output: () => out };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`onset did not become ready: ${out}`);
}
