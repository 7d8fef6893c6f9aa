import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.ts';
import { createPool } from '../src/db/pool.ts';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.ts');
let dir: string;
let proc: ChildProcess | undefined;

afterAll(async () => {
  proc?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Start Onset the way `npm start` does (embedded PostgreSQL, no DATABASE_URL), without the agent. */
async function startMain(
  dataDir: string,
  port: number,
): Promise<{ proc: ChildProcess; output: () => string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ONSET_DATA_DIR: dataDir,
    ONSET_PORT: String(port),
    ONSET_OTLP_PORT: '0',
    ONSET_LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // Up to 60 s: embedded PostgreSQL's first start (initdb) is slow on a busy 2-core machine.
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`onset exited early: ${out}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok)
        return { proc: child, output: () => out };
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`onset did not become ready: ${out}`);
}

const exited = (p: ChildProcess) =>
  new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));

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
        resourceSpans: [
          {
            resource: {
              attributes: [{ key: 'service.name', value: { stringValue: 'persisted' } }],
            },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '1'.repeat(32),
                    spanId: '2'.repeat(16),
                    name: 'fsync',
                    startTimeUnixNano: String(start),
                    endTimeUnixNano: String(start + 1_000_000n),
                  },
                ],
              },
            ],
          },
        ],
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
    const list = (await (
      await fetch(`http://127.0.0.1:${port}/api/v1/series?service=persisted`)
    ).json()) as { series: unknown[] };
    expect(list.series).toHaveLength(1);
    const code2 = exited(second.proc);
    second.proc.kill('SIGINT');
    expect(await code2).toBe(0);
    expect(existsSync(path.join(dir, 'data', 'pg', 'postmaster.pid'))).toBe(false);
    proc = undefined;
  });
});

const SUPERVISOR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../src/supervisor.ts',
);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every live descendant of pid (children keep the supervisor as parent even in their own process group). */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      parentOf.set(Number(p), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf)
      if (parent === p) {
        out.push(child);
        walk(child);
      }
  };
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

/** Spans of `service` stored in the (stopped) embedded database in `pgDir`, read by starting it again. */
/**
 * Spans stored by this supervisor's server. Only its agent sends to it, and a host-wide agent
 * sends each program's spans under that program's service (docs/agent.md), so all of them.
 */
async function storedSpans(pgDir: string): Promise<number> {
  const db = await startEmbeddedPostgres({ dataDir: pgDir, port: await freePort() });
  const pool = createPool(db.url('onset'), 1);
  try {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM observations`);
    return rows[0]!.n;
  } finally {
    await pool.end();
    await db.stop();
  }
}

const agentTemp = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('onset-agent-'));

/**
 * The agent temp folders these processes use (named on bpftrace's command line or open as a
 * file): this run's own, not those of agents other test files run at the same time.
 */
function tempInUse(pids: number[]): string[] {
  const names = new Set<string>();
  const note = (text: string) => {
    for (const m of text.matchAll(/onset-agent-[A-Za-z0-9-]+/g)) names.add(m[0]);
  };
  for (const pid of pids) {
    try {
      note(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      for (const fd of readdirSync(`/proc/${pid}/fd`)) note(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return [...names].filter((n) => existsSync(path.join(os.tmpdir(), n)));
}

describe('npm start: the supervisor owns the process tree', () => {
  it('runs `exec node … supervisor.ts --build-web --with-agent`, so npm signals reach it directly', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe(
      'exec node --import tsx apps/server/src/supervisor.ts --build-web --with-agent',
    );
  });

  // Ctrl-C in a terminal: SIGINT to the whole foreground process group, the supervisor's.
  for (const signal of ['SIGTERM', 'SIGHUP', 'Ctrl-C'] as const) {
    it(`${signal}: the agent flushes, then the server and PostgreSQL stop; nothing survives, no temp folder remains`, async () => {
      const sdir = await mkdtemp(path.join(os.tmpdir(), 'onset-sup-'));
      await chmod(sdir, 0o755);
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ONSET_DATA_DIR: path.join(sdir, 'data'),
        ONSET_PORT: String(port),
        ONSET_OTLP_PORT: '0',
        ONSET_LOG_LEVEL: 'warn',
        ONSET_EMBEDDED_PG_PORT: String(await freePort()),
      };
      delete env.DATABASE_URL;
      delete env.ONSET_AGENT;
      // A folder left by an earlier run that crashed: removed at start (no process uses it).
      const stale = path.join(os.tmpdir(), `onset-agent-bpftrace-stale${signal}`);
      mkdirSync(stale, { recursive: true });
      writeFileSync(path.join(stale, 'onset-agent.bt'), '');
      utimesSync(stale, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
      const before = new Set(agentTemp());
      // What `npm start` execs, minus the web build (other tests serve apps/web/dist meanwhile).
      const sup = spawn(process.execPath, ['--import', 'tsx', SUPERVISOR, '--with-agent'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: signal === 'Ctrl-C', // its own group, as a shell gives a foreground job
      });
      proc = sup;
      let out = '';
      sup.stdout!.on('data', (d) => (out += d));
      sup.stderr!.on('data', (d) => (out += d));
      try {
        for (let i = 0; i < 1200 && !/onset-agent: running with/.test(out); i++) {
          if (sup.exitCode !== null) throw new Error(`supervisor exited early: ${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(out).toMatch(/onset-agent: running with/);
        expect(existsSync(stale)).toBe(false);
        expect(out).toMatch(/removed \d+ stale agent temp folder/);
        if (signal === 'SIGTERM') {
          // A child dying unexpectedly is logged and restarted with backoff.
          const serverPid = descendants(sup.pid!).find((p) =>
            readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('main.ts'),
          )!;
          process.kill(serverPid, 'SIGKILL');
          for (
            let i = 0;
            i < 300 &&
            !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
              (r) => r.ok && !alive(serverPid),
              () => false,
            ));
            i++
          )
            await new Promise((r) => setTimeout(r, 100));
          expect(out).toMatch(/server exited unexpectedly \(SIGKILL\); restarting in 1 s/);
          expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
        }
        // Let the agent measure something, so it has a batch in hand when the signal comes.
        await new Promise((r) => setTimeout(r, 3000));
        const tree = descendants(sup.pid!);
        expect(tree.length).toBeGreaterThanOrEqual(4); // server, agent, postgres and its workers
        // This run's folders; without any in use (no bpftrace), every folder that appeared since.
        const inUse = tempInUse(tree);
        const runTemp = inUse.length ? inUse : agentTemp().filter((n) => !before.has(n));

        const t0 = Date.now();
        const code = exited(sup);
        if (signal === 'Ctrl-C') process.kill(-sup.pid!, 'SIGINT');
        else sup.kill(signal);
        expect(await code).toBe(0);
        const ms = Date.now() - t0;
        expect(ms).toBeLessThan(10_000);
        // In order: the agent delivered everything to the still-running server, then the rest stopped.
        expect(out).toMatch(/onset-agent: flushed; \d+ spans delivered/);
        expect(out).not.toMatch(/undelivered/);
        expect(out).toMatch(/stopped in \d+ ms \(agent exited, server exited, PostgreSQL stopped/);
        expect(out.indexOf('onset-agent: flushed')).toBeLessThan(out.lastIndexOf('stopped in'));
        expect(tree.filter(alive)).toEqual([]);
        expect(existsSync(path.join(sdir, 'data', 'pg', 'postmaster.pid'))).toBe(false);
        for (const n of runTemp) expect(existsSync(path.join(os.tmpdir(), n)), n).toBe(false);
        // The agent's spans, its last batch included, are stored: every span it had delivered
        // (acknowledged by the server) is in the database once PostgreSQL is started again.
        const delivered = Number(/flushed; (\d+) spans delivered/.exec(out)![1]);
        expect(delivered).toBeGreaterThan(0);
        const stored = await storedSpans(path.join(sdir, 'data', 'pg'));
        expect(stored).toBe(delivered);
        console.log(
          `${signal}: supervisor and ${tree.length} descendants gone in ${ms} ms; ${delivered} spans delivered by the agent, ${stored} stored`,
        );
      } finally {
        sup.kill('SIGKILL');
        proc = undefined;
        await rm(sdir, { recursive: true, force: true });
      }
    }, 180_000);
  }
});
