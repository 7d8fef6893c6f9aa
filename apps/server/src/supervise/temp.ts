/**
 * The agent's temporary folders (`onset-agent-*` in the temp directory: a
 * bpftrace script, FIFOs). The agent removes its own on a clean stop; after a
 * crash or SIGKILL they stay. A folder is stale when no process has a file in
 * it open or names it on its command line (Linux /proc); only those are removed.
 */
import { readdir, readlink, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const AGENT_TEMP_PREFIX = 'onset-agent-';

async function inUse(dirs: string[]): Promise<Set<string>> {
  const used = new Set<string>();
  const procs = await readdir('/proc').catch(() => [] as string[]);
  for (const pid of procs) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    for (const d of dirs) if (cmdline.includes(d)) used.add(d);
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      for (const d of dirs) if (target.startsWith(`${d}/`)) used.add(d);
    }
  }
  return used;
}

/** Remove agent temp folders older than minAgeMs that no process uses; returns what was removed. */
export async function removeStaleAgentTemp(
  tmp = os.tmpdir(),
  minAgeMs = 10_000,
): Promise<string[]> {
  const names = (await readdir(tmp).catch(() => [] as string[])).filter((n) =>
    n.startsWith(AGENT_TEMP_PREFIX),
  );
  const candidates: string[] = [];
  for (const n of names) {
    const p = path.join(tmp, n);
    const st = await stat(p).catch(() => null);
    if (st?.isDirectory() && Date.now() - st.mtimeMs > minAgeMs) candidates.push(p);
  }
  if (!candidates.length) return [];
  const used = await inUse(candidates);
  const removed: string[] = [];
  for (const p of candidates) {
    if (used.has(p)) continue;
    await rm(p, { recursive: true, force: true }).catch(() => {});
    removed.push(p);
  }
  return removed;
}

/** Agent temp folders that exist now (for the supervisor's exit check). */
export async function agentTempDirs(tmp = os.tmpdir()): Promise<string[]> {
  return (await readdir(tmp).catch(() => [] as string[]))
    .filter((n) => n.startsWith(AGENT_TEMP_PREFIX))
    .map((n) => path.join(tmp, n));
}
