/** Shared benchmark plumbing: an embedded PostgreSQL, the server as a child process, RSS sampling, results files. */
import { mkdtemp, mkdir, writeFile, chmod, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@onset/server/embedded-postgres';
import {
  startServerProcess as startTestkitServerProcess,
  type ServerProcess,
  type ServerProcessOptions,
} from '@onset/testkit';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function benchDatabase(settings: readonly string[] = []): Promise<{
  db: EmbeddedDatabase;
  url: string;
  dataDir: string;
}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'onset-bench-'));
  await chmod(dir, 0o755);
  const dataDir = path.join(dir, 'data');
  const db = await startEmbeddedPostgres({ dataDir, ephemeral: true, settings });
  await db.createDatabase('onset');
  return { db, url: db.url('onset'), dataDir };
}

/** The postmaster's pid, from the first line of `postmaster.pid` in the data directory. */
export async function postmasterPid(dataDir: string): Promise<number> {
  const text = await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

/** The server as a child process: one home with the tests' (packages/testkit), echoing its stderr here. */
export function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  opts: Omit<ServerProcessOptions, 'echoStderr'> = {},
): Promise<ServerProcess> {
  return startTestkitServerProcess(databaseUrl, env, { ...opts, echoStderr: true });
}
export type { ServerProcess };

/** Resident set size of a process in MB, from /proc. */
export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

export function percentile(values: number[], q: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export async function writeResult(name: string, result: Record<string, unknown>): Promise<string> {
  const dir = path.join(ROOT, 'bench/results');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  await writeFile(
    file,
    JSON.stringify(
      {
        name,
        at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, node: process.version },
        ...result,
      },
      null,
      2,
    ) + '\n',
  );
  return file;
}
