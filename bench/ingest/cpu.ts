/**
 * CPU seconds of a process, and of a PostgreSQL instance (its postmaster and
 * every backend), read from /proc/<pid>/stat. Backends that exit are reaped by
 * the postmaster and show up in its cutime/cstime, so a delta between two
 * readings covers short-lived backends too. Linux only.
 */
import { readFileSync, readdirSync } from 'node:fs';

const TICKS = 100; // USER_HZ (`getconf CLK_TCK`), 100 on every Linux the bench runs on

interface Stat {
  ppid: number;
  /** utime + stime (own threads), in ticks. */
  own: number;
  /** cutime + cstime (reaped children), in ticks. */
  children: number;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name, which may itself hold spaces or parentheses.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    ppid: Number(f[1]),
    own: Number(f[11]) + Number(f[12]),
    children: Number(f[13]) + Number(f[14]),
  };
}

/** User + system CPU seconds of one process (all its threads: worker threads included). */
export function processCpuSeconds(pid: number): number {
  const s = readStat(pid);
  return s ? s.own / TICKS : NaN;
}

/** CPU seconds of a PostgreSQL instance: the postmaster, its reaped children and its live children. */
export function postgresCpuSeconds(postmasterPid: number): number {
  const root = readStat(postmasterPid);
  if (!root) return NaN;
  let ticks = root.own + root.children;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === postmasterPid) continue;
    const s = readStat(pid);
    if (s && s.ppid === postmasterPid) ticks += s.own + s.children;
  }
  return ticks / TICKS;
}
