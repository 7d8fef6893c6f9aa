/**
 * Which processes other Onset agents on this host report, so that one
 * tracing the whole host does not send a second copy of their data under its
 * own service name. Every agent publishes a claim (its pid and start time,
 * service name, filter and probe directory) as a small JSON file in a
 * run directory shared by the agents of a host, and withdraws it on stop. An
 * agent tracing the whole host leaves out events of a process that another
 * live agent claims: that agent itself and its children (its probes), a pid
 * filter's process and its descendants, a process name, a cgroup; and
 * unmounts under another agent's probe directory (its umount(8) is gone by
 * the time the event is read).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callerOf } from '../caller.ts';
import { isTraced, type AgentEvent } from '../events.ts';

export interface Claim {
  pid: number;
  /** Kernel start time of the agent process (clock ticks), against pid reuse. */
  startTicks: number;
  service: string;
  pids: number[];
  comms: string[];
  /** cgroup v2 paths relative to the hierarchy's root, e.g. /system.slice/x.service */
  cgroups: string[];
  probeDir?: string;
}

/** /run/onset-agent as root, else a per-user directory in the temp directory; ONSET_AGENT_RUN_DIR overrides. */
export function defaultClaimsDir(env: NodeJS.ProcessEnv, uid: number): string {
  if (env.ONSET_AGENT_RUN_DIR) return env.ONSET_AGENT_RUN_DIR;
  return uid === 0 ? '/run/onset-agent' : path.join(os.tmpdir(), `onset-claims-${uid}`);
}

interface ProcInfo {
  ppid: number;
  startTicks: number;
  comm: string;
}

/** /proc/<pid>/stat: comm in parentheses (may hold spaces), then state, ppid, ... starttime (field 22). */
export function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const rest = stat.slice(close + 2).split(' ');
    return {
      comm: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(rest[1]),
      startTicks: Number(rest[19]),
    };
  } catch {
    return undefined;
  }
}

/** The process's cgroup v2 path relative to the hierarchy's root, e.g. /system.slice/x.service. */
export function cgroupOf(pid: number): string | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    return line?.slice(3);
  } catch {
    return undefined;
  }
}

const REREAD_MS = 5_000;
const ANCESTRY_TTL_MS = 10_000;

export class AgentClaims {
  private readonly file: string;
  private others: Claim[] = [];
  private readAt = 0;
  private readonly parents = new Map<number, { ppid?: number; at: number }>();

  constructor(
    private readonly dir: string,
    private readonly self: Claim,
  ) {
    this.file = path.join(dir, `${self.pid}.json`);
  }

  publish(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    writeFileSync(this.file, JSON.stringify(this.self));
  }

  withdraw(): void {
    rmSync(this.file, { force: true });
  }

  /** Claims of other agents that are still running (stale files of dead agents are removed). */
  current(): Claim[] {
    const now = Date.now();
    if (now - this.readAt < REREAD_MS) return this.others;
    this.readAt = now;
    const found: Claim[] = [];
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      /* no directory: no other agents */
    }
    for (const name of names) {
      if (!/^\d+\.json$/.test(name) || name === path.basename(this.file)) continue;
      let c: Claim;
      try {
        c = JSON.parse(readFileSync(path.join(this.dir, name), 'utf8')) as Claim;
      } catch {
        continue;
      }
      if (procInfo(c.pid)?.startTicks === c.startTicks) found.push(c);
      else rmSync(path.join(this.dir, name), { force: true });
    }
    this.others = found;
    return found;
  }

  /** A process's parent, cached briefly: ancestors are shared, so a busy tree costs few reads. */
  private parentOf(pid: number, now: number): number | undefined {
    const hit = this.parents.get(pid);
    if (hit && now - hit.at < ANCESTRY_TTL_MS) return hit.ppid;
    const ppid = procInfo(pid)?.ppid;
    if (this.parents.size > 10_000) this.parents.clear();
    this.parents.set(pid, { ppid, at: now });
    return ppid;
  }

  /** pid and its ancestors, nearest first (as far as they still exist). */
  private chain(pid: number): number[] {
    const now = Date.now();
    const chain: number[] = [];
    for (let p: number | undefined = pid, i = 0; p !== undefined && p > 1 && i < 64; i++) {
      chain.push(p);
      p = this.parentOf(p, now);
    }
    return chain;
  }

  /** The other agent whose data this traced event is, if any. */
  ownerOf(e: AgentEvent): Claim | undefined {
    if (!isTraced(e)) return undefined;
    const others = this.current();
    if (others.length === 0) return undefined;
    const { pid, comm } = callerOf(e);
    let chain: number[] | undefined;
    let cgroup: string | null | undefined;
    for (const c of others) {
      if (e.kind === 'unmount' && c.probeDir && e.mountPoint.startsWith(`${c.probeDir}/`)) return c;
      if (comm !== undefined && c.comms.some((n) => n.slice(0, 15) === comm)) return c;
      if (pid === undefined) continue;
      chain ??= this.chain(pid);
      if (chain.includes(c.pid) || c.pids.some((p) => chain!.includes(p))) return c;
      if (c.cgroups.length) {
        if (cgroup === undefined) cgroup = cgroupOf(pid) ?? null;
        if (cgroup !== null && c.cgroups.includes(cgroup)) return c;
      }
    }
    return undefined;
  }
}
