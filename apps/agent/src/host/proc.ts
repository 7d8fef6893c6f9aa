/** Small readers of /proc used by several sources and probes. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

let pageSize: number | undefined;

/** The kernel page size (RSS counters are in pages). */
export function kernelPageSize(): number {
  if (pageSize === undefined) {
    try {
      pageSize = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096;
    } catch {
      pageSize = 4096;
    }
  }
  return pageSize;
}

/** Open file descriptors of a process, or undefined when it is gone or not readable. */
export function countOpenFds(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

export function rssBytes(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
    return Number(fields[1]) * kernelPageSize();
  } catch {
    return undefined;
  }
}

export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Pids whose comm is one of `names`. */
export function pidsByName(names: readonly string[]): number[] {
  const wanted = new Set(names.map((n) => n.slice(0, 15)));
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = processName(Number(entry));
    if (comm && wanted.has(comm)) found.push(Number(entry));
  }
  return found;
}

/** System-wide Dirty and Writeback from /proc/meminfo, in bytes. */
export function dirtyAndWriteback(): { dirtyBytes: number; writebackBytes: number } | undefined {
  try {
    const text = readFileSync('/proc/meminfo', 'utf8');
    const kb = (key: string) =>
      Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    const dirtyBytes = kb('Dirty');
    const writebackBytes = kb('Writeback');
    return Number.isFinite(dirtyBytes) && Number.isFinite(writebackBytes)
      ? { dirtyBytes, writebackBytes }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Identity of a process's mount namespace, e.g. "mnt:[4026531841]". */
export function mountNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

export interface MountEntry {
  id: number;
  /** Path inside the filesystem that is mounted (not always "/" for bind mounts). */
  root: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** mountinfo escapes space, tab, newline and backslash as \ooo octal. */
function unescapeMountField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Parse /proc/<pid>/mountinfo (proc(5)). */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    const sep = fields.indexOf('-', 6);
    if (sep < 0 || fields.length < sep + 3) continue;
    entries.push({
      id: Number(fields[0]),
      root: unescapeMountField(fields[3]!),
      mountPoint: unescapeMountField(fields[4]!),
      fsType: fields[sep + 1]!,
      source: unescapeMountField(fields[sep + 2]!),
    });
  }
  return entries;
}

export function readMountinfo(pid: number | 'self'): MountEntry[] | undefined {
  try {
    return parseMountinfo(readFileSync(`/proc/${pid}/mountinfo`, 'utf8'));
  } catch {
    return undefined;
  }
}
