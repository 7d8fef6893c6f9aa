import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort } from '@onset/server/embedded-postgres';

/** An Onset server in a process of its own (as one of several behind a load balancer). */
export interface ServerProcess {
  url: string;
  otlpUrl: string;
  proc: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output: () => string;
  /** SIGTERM, resolved when the process has exited. */
  stop: () => Promise<void>;
}

export interface ServerProcessOptions {
  /** Another checkout's root whose server to run (benchmarks compare builds); default this one. */
  root?: string;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** Also copy the server's stderr to this process's stderr (benchmarks show a failing server). */
  echoStderr?: boolean;
}

const MAIN = createRequire(import.meta.url).resolve('@onset/server/main');

/**
 * Start `apps/server/src/main.ts` on free loopback ports against `databaseUrl`
 * and wait until /readyz answers; `env` adds or overrides settings. Tests and
 * benchmarks that need several real servers on one database (shards, shared
 * sampling) use this rather than startTestServer, which runs in-process.
 */
export async function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  opts: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const otlpPort = await freePort();
  const main = opts.root ? path.join(opts.root, 'apps/server/src/main.ts') : MAIN;
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', main], {
    ...(opts.root ? { cwd: opts.root } : {}),
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
  proc.stderr!.on('data', (d) => {
    out += d;
    if (opts.echoStderr) process.stderr.write(d);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`onset exited early: ${out}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      return {
        url,
        otlpUrl: `http://127.0.0.1:${otlpPort}`,
        proc,
        output: () => out,
        stop: () => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          return exited;
        },
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill('SIGKILL');
  throw new Error(`onset did not become ready: ${out}`);
}
