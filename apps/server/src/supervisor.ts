/**
 * `npm start`: one process that owns everything Onset runs on this machine.
 *
 *   supervisor ── web build (once, with --build-web)
 *              ├─ embedded PostgreSQL (when DATABASE_URL is unset)
 *              ├─ server (main.ts, restarted with backoff if it dies)
 *              └─ agent  (with --with-agent and ONSET_AGENT != off; restarted likewise)
 *
 * SIGINT, SIGTERM or SIGHUP stops them in order, within 10 s: the agent first
 * (it sends what it has queued to the still-running server), then the server
 * (it drains), then PostgreSQL. Each child runs in its own process group and
 * whatever is left of a group is killed, so nothing outlives the supervisor.
 * Stale agent temp folders from earlier runs are removed at start, and the
 * agent's at exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from './config.ts';
import { killGroup, SupervisedChild } from './supervise/child.ts';
import { removeStaleAgentTemp } from './supervise/temp.ts';
import { recordWebBuild, webBuildIsFresh, webSourcesHash } from './supervise/web-build.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../../..');
const MAIN = path.join(here, 'main.ts');
const PG_CHILD = path.join(here, 'supervise/postgres.ts');
const AGENT_BIN = path.resolve(here, '../../agent/bin/onset-agent.js');

/**
 * Shutdown budget, 10 s in all: the agent's flush and the server's drain get
 * at most these; PostgreSQL (a fast shutdown writes a checkpoint) gets what is
 * left of 9.5 s, and is killed only past that.
 */
const AGENT_GRACE_MS = 4000;
const SERVER_GRACE_MS = 3500;
const TOTAL_GRACE_MS = 9500;

const log = (line: string) => console.log(`onset: ${line}`);

/** A URL a browser on this machine can open: a wildcard listen address becomes loopback. */
function browserUrl(url: string): string {
  return url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, 'http://127.0.0.1');
}
let exitCode = 0;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const config = loadConfigOrExit();
  const withAgent = args.includes('--with-agent') && config.withAgent;

  let stopping = false;
  let build: ChildProcess | undefined;
  let postgres: SupervisedChild | undefined;
  let server: SupervisedChild | undefined;
  let agent: SupervisedChild | undefined;

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    log(`${signal}, shutting down`);
    if (build?.pid) killGroup(build.pid, 'SIGTERM');
    const a = await agent?.stop('SIGTERM', AGENT_GRACE_MS);
    const s = await server?.stop('SIGTERM', SERVER_GRACE_MS);
    const pgResult = await postgres?.stop(
      'SIGTERM',
      Math.max(1000, t0 + TOTAL_GRACE_MS - Date.now()),
    );
    const pg = pgResult === 'exited' ? 'stopped' : pgResult;
    const removed = await removeStaleAgentTemp(undefined, 2000);
    log(
      `stopped in ${Date.now() - t0} ms (agent ${a ?? 'not started'}, server ${s ?? 'not started'}` +
        `${pg ? `, PostgreSQL ${pg}` : ''}${removed.length ? `, removed ${removed.length} temp folder(s)` : ''})`,
    );
    process.exit(exitCode);
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => void shutdown(s));
  // npm forwards SIGINT and SIGTERM but not SIGHUP: `kill -HUP <npm>` ends npm alone. The
  // supervisor, reparented, then stops everything instead of running on as an orphan.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown('parent process gone');
  }, 500).unref();

  const stale = await removeStaleAgentTemp();
  if (stale.length) log(`removed ${stale.length} stale agent temp folder(s) from earlier runs`);

  const sourcesHash = args.includes('--build-web') ? webSourcesHash(ROOT) : '';
  if (sourcesHash && webBuildIsFresh(ROOT, sourcesHash)) {
    log('web UI is up to date with its sources; not rebuilding');
  } else if (sourcesHash) {
    log('building the web UI (its sources changed since the last build)');
    build = spawn('npm', ['run', 'build:web', '--silent'], {
      cwd: ROOT,
      stdio: 'inherit',
      detached: true,
    });
    const code = await new Promise<number | null>((r) => build!.once('exit', (c) => r(c)));
    build = undefined;
    if (stopping) return;
    if (code !== 0) throw new Error(`web build failed (exit ${code})`);
    recordWebBuild(ROOT, sourcesHash);
  }

  const env: NodeJS.ProcessEnv = { ...process.env };
  if (!config.databaseUrl) {
    const dataDir = path.join(config.dataDir, 'pg');
    log(`no DATABASE_URL; starting embedded PostgreSQL in ${dataDir}`);
    let pgReady: (url: string) => void;
    const pgUrl = new Promise<string>((r) => (pgReady = r));
    postgres = new SupervisedChild(
      {
        name: 'embedded PostgreSQL',
        command: process.execPath,
        args: [...process.execArgv, PG_CHILD],
        // A restart keeps the port the server connects to.
        env: { ...process.env, ONSET_PG_DATA_DIR: dataDir },
        onStart: (child) =>
          child.on('message', (m: { type?: string; url?: string; port?: number }) => {
            if (m?.type !== 'ready' || !m.url) return;
            if (postgres && m.port) postgres.setEnv('ONSET_EMBEDDED_PG_PORT', String(m.port));
            pgReady(m.url);
          }),
      },
      log,
    );
    postgres.start();
    env.DATABASE_URL = await pgUrl;
    if (stopping) return;
  }

  let ready: (m: { url: string; otlpUrl: string | null }) => void;
  const serverReady = new Promise<{ url: string; otlpUrl: string | null }>((r) => (ready = r));
  server = new SupervisedChild(
    {
      name: 'server',
      command: process.execPath,
      args: [...process.execArgv, MAIN],
      env,
      onStart: (child) =>
        child.on('message', (m: { type?: string; url?: string; otlpUrl?: string | null }) => {
          if (m?.type === 'ready' && m.url) ready({ url: m.url, otlpUrl: m.otlpUrl ?? null });
        }),
    },
    log,
  );
  server.start();
  const urls = await serverReady;
  if (stopping) return;

  if (withAgent && existsSync(AGENT_BIN)) {
    const token = [...config.tokens.entries()].find(([, s]) => s.has('ingest'))?.[0];
    agent = new SupervisedChild(
      {
        name: 'agent',
        command: process.execPath,
        args: [AGENT_BIN],
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: urls.otlpUrl ?? urls.url,
          ...(token ? { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${token}` } : {}),
        },
      },
      log,
    );
    const child = agent.start();
    log(`local agent started (pid ${child.pid}); set ONSET_AGENT=off to skip it`);
  }
  log(`supervising (pid ${process.pid}): SIGINT, SIGTERM or SIGHUP stops everything`);
  console.log(`\nonset: open ${browserUrl(urls.url)}\n`);
}

main().catch((err) => {
  console.error('onset: failed to start:', err instanceof Error ? err.message : err);
  exitCode = 1;
  process.kill(process.pid, 'SIGTERM'); // stop whatever did start, in order
});
