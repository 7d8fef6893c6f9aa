/**
 * A real Citus cluster on loopback for tests and benchmarks: a coordinator and N workers, each a
 * system PostgreSQL 15 (`initdb` into a temporary directory, `shared_preload_libraries=citus`),
 * joined with `citus_add_node`. Citus comes from `../shared/vendor/citus/build.sh` (docs/citus.md);
 * where PostgreSQL 15 or Citus is missing, `citusMissing()` says what, and the suites skip.
 *
 * The binaries are Debian's (`/usr/lib/postgresql/15/bin`); ONSET_CITUS_PG_BIN names another
 * directory holding `initdb`, `postgres` and `pg_config`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const CITUS_PG_BIN = process.env.ONSET_CITUS_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why a Citus cluster cannot be started here, or null when it can. */
export function citusMissing(): string | null {
  for (const tool of ['initdb', 'postgres', 'pg_config'])
    if (!existsSync(path.join(CITUS_PG_BIN, tool)))
      return `PostgreSQL 15 server binaries (${path.join(CITUS_PG_BIN, tool)}; apt-get install postgresql-15)`;
  const r = spawnSync(path.join(CITUS_PG_BIN, 'pg_config'), ['--pkglibdir'], { encoding: 'utf8' });
  const lib = r.stdout?.trim();
  if (!lib || !existsSync(path.join(lib, 'citus.so')))
    return `the Citus extension (${lib ?? '?'}/citus.so; bash ../shared/vendor/citus/build.sh)`;
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** As root PostgreSQL runs as the `postgres` system user (it refuses root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (os.userInfo().uid !== 0) return undefined;
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isFinite(uid) || uid === 0)
    throw new Error('running as root needs a `postgres` system user for the Citus cluster');
  return { uid, gid: id('-g') };
}

export interface CitusNode {
  name: string;
  port: number;
  dataDir: string;
  url: (database?: string) => string;
  /** Fast shutdown (SIGINT): the postmaster stops and is gone when this resolves. */
  stop: () => Promise<void>;
  /** Start it again on the same port and data directory. */
  start: () => Promise<void>;
  running: () => boolean;
}

export interface CitusCluster {
  coordinator: CitusNode;
  workers: CitusNode[];
  /**
   * A fresh database on every node, with the extension, the coordinator registered and every
   * worker added; returns its URL on the coordinator (what DATABASE_URL points at).
   */
  createDatabase: (prefix?: string) => Promise<string>;
  /** Start one more worker node (not yet added to any database: `citus_add_node`). */
  addWorker: () => Promise<CitusNode>;
  stop: () => Promise<void>;
}

const SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "shared_preload_libraries = 'citus'",
  'max_connections = 300',
  'shared_buffers = 128MB',
  'max_locks_per_transaction = 256',
  'max_prepared_transactions = 200',
  'max_worker_processes = 32',
  // Test data is disposable: no fsync (the system PostgreSQL's default would be on).
  'fsync = off',
  'full_page_writes = off',
  'synchronous_commit = off',
  "log_min_messages = 'fatal'",
  "lc_messages = 'C'",
  'citus.shard_count = 8',
  // A worker that does not answer is given up on after 10 s, not the 30 s default (one that is
  // down refuses at once).
  'citus.node_connection_timeout = 10000',
];

async function waitReady(port: number, proc: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`postgres exited (${proc.exitCode}): ${log()}`);
    const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch {
      await c.end().catch(() => {});
      if (Date.now() > until) throw new Error(`postgres on ${port} not ready: ${log()}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

async function makeNode(root: string, name: string): Promise<CitusNode> {
  const dataDir = path.join(root, name);
  const port = await freePort();
  const owner = runAs();
  const init = spawnSync(
    path.join(CITUS_PG_BIN, 'initdb'),
    ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '-N'],
    { encoding: 'utf8', ...owner },
  );
  if (init.status !== 0) throw new Error(`initdb ${name}: ${init.stderr || init.stdout}`);
  await writeFile(
    path.join(dataDir, 'postgresql.auto.conf'),
    [...SETTINGS, `port = ${port}`, `unix_socket_directories = '${root}'`].join('\n') + '\n',
  );
  if (owner) await chown(path.join(dataDir, 'postgresql.auto.conf'), owner.uid, owner.gid);
  let proc: ChildProcess | null = null;
  let out = '';
  const node: CitusNode = {
    name,
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    running: () => proc !== null && proc.exitCode === null && proc.signalCode === null,
    start: async () => {
      out = '';
      const p = spawn(path.join(CITUS_PG_BIN, 'postgres'), ['-D', dataDir], {
        stdio: ['ignore', 'pipe', 'pipe'],
        // libpq inside PostgreSQL (its connections to the other nodes) reads ~/.postgresql.
        env: { ...process.env, HOME: root },
        ...owner,
      });
      p.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
      p.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
      proc = p;
      await waitReady(port, p, () => out);
    },
    stop: async () => {
      const p = proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        p.once('exit', () => resolve());
        p.kill('SIGINT');
      });
    },
  };
  await node.start();
  return node;
}

/** Start a coordinator and `workers` workers on loopback in a temporary directory. */
export async function startCitusCluster(opts: { workers?: number } = {}): Promise<CitusCluster> {
  const missing = citusMissing();
  if (missing) throw new Error(`cannot start a Citus cluster: missing ${missing}`);
  const root = await mkdtemp(path.join(os.tmpdir(), 'onset-citus-'));
  await chmod(root, 0o777);
  const nodes: CitusNode[] = [];
  try {
    const names = [
      'coordinator',
      ...Array.from({ length: opts.workers ?? 2 }, (_, i) => `worker${i + 1}`),
    ];
    // One after another: three initdbs at once on two cores gain nothing.
    for (const n of names) nodes.push(await makeNode(root, n));
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  const [coordinator, ...workers] = nodes as [CitusNode, ...CitusNode[]];
  const cluster: CitusCluster = {
    coordinator,
    workers,
    createDatabase: (prefix) =>
      createCitusDatabase(
        { coordinator: coordinator.url(), workers: workers.map((w) => w.url()) },
        prefix,
      ),
    addWorker: async () => {
      const w = await makeNode(root, `worker${workers.length + 1}`);
      workers.push(w);
      return w;
    },
    stop: async () => {
      await Promise.all([coordinator, ...workers].map((n) => n.stop()));
      await rm(root, { recursive: true, force: true });
    },
  };
  return cluster;
}

async function exec(url: string, sql: string): Promise<void> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

/** The nodes of a cluster by their `postgres` database URLs. */
export interface CitusNodes {
  coordinator: string;
  workers: string[];
}

/**
 * A fresh database on every node with the extension, the coordinator registered and every
 * worker added; returns its URL on the coordinator (what DATABASE_URL points at). Database
 * creation is not propagated by Citus by default, so it is made on each node here.
 */
export async function createCitusDatabase(
  nodes: CitusNodes,
  prefix = 'onset_citus',
): Promise<string> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  // One database made at a time: two suites starting together (two test workers) made theirs
  // at once, and one's citus_add_node failed with "failure on connection marked as essential".
  const lock = new pg.Client(nodes.coordinator);
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [CREATE_DATABASE_LOCK]);
    for (const n of [nodes.coordinator, ...nodes.workers]) await exec(n, `CREATE DATABASE ${name}`);
    await Promise.all(
      nodes.workers.map((w) => exec(withDatabase(w, name), 'CREATE EXTENSION citus')),
    );
    const port = (u: string) => Number(new URL(u).port);
    await exec(
      withDatabase(nodes.coordinator, name),
      `CREATE EXTENSION citus;
       SELECT citus_set_coordinator_host('127.0.0.1', ${port(nodes.coordinator)});
       ${nodes.workers.map((w) => `SELECT citus_add_node('127.0.0.1', ${port(w)});`).join('\n')}`,
    );
  } finally {
    await lock.end(); // ends the session: its advisory lock goes with it
  }
  return withDatabase(nodes.coordinator, name);
}

/** The advisory lock (on the coordinator's `postgres` database) createCitusDatabase holds. */
const CREATE_DATABASE_LOCK = 7_031_032;

/**
 * Add a worker to a database of a running cluster (docs/citus.md "Adding a worker"): the
 * database and the extension on the new node (Citus does not propagate CREATE DATABASE), then
 * `citus_add_node` on the coordinator, which copies the metadata and the reference tables there.
 * Shards move only when rebalanced. `worker` is the new node's `postgres` database URL.
 */
export async function joinCitusWorker(databaseUrl: string, worker: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  await exec(worker, `CREATE DATABASE ${name}`);
  await exec(withDatabase(worker, name), 'CREATE EXTENSION citus');
  const c = new pg.Client(databaseUrl);
  await c.connect();
  try {
    await c.query(`SELECT citus_add_node('127.0.0.1', $1)`, [Number(new URL(worker).port)]);
  } finally {
    await c.end();
  }
}

/** A fresh database on the `citus` test project's cluster (citus-setup.ts). */
export function createCitusTestDatabase(prefix = 'onset_test'): Promise<string> {
  const nodes = process.env.ONSET_TEST_CITUS_NODES;
  if (!nodes)
    throw new Error(
      `no Citus cluster for this run (missing ${citusMissing() ?? 'citus-setup.ts globalSetup'})`,
    );
  return createCitusDatabase(JSON.parse(nodes) as CitusNodes, prefix);
}
