/**
 * Which kernel-event source to use on this host, and why (best first):
 * bpftrace (needs root, the bpftrace binary, kernel BTF and syscall
 * tracepoints), else strace (needs the strace binary, processes to attach to,
 * and permission to ptrace them). Synthetic probes always run besides.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfig } from '../config/schema.ts';
import { readKernelLayout, type KernelLayout } from '../host/btf.ts';
import { findExecutable, type HostFacts } from '../host/facts.ts';
import { pidsByName } from '../host/proc.ts';

export interface BpftracePlan {
  use: boolean;
  reason: string;
  path?: string;
  layout?: KernelLayout;
}

export interface StracePlan {
  use: boolean;
  reason: string;
  path?: string;
}

/** Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts. */
export function cgroup2Root(): string {
  return existsSync('/sys/fs/cgroup/cgroup.controllers') || !existsSync('/sys/fs/cgroup/unified')
    ? '/sys/fs/cgroup'
    : '/sys/fs/cgroup/unified';
}

/** A cgroup given as an absolute path, or relative to the cgroup v2 root (e.g. system.slice/postgresql.service). */
function cgroupDir(spec: string): string {
  return spec.startsWith('/') ? spec : path.join(cgroup2Root(), spec);
}

/** A cgroup as /proc/<pid>/cgroup names it: its path under the v2 root, e.g. /system.slice/x.service. */
export function cgroupPath(spec: string): string {
  return `/${path.relative(cgroup2Root(), cgroupDir(spec))}`;
}

/** cgroup v2 id as bpftrace's `cgroup` builtin reports it: the inode number of the cgroup directory. */
export function cgroupId(spec: string): bigint {
  return statSync(cgroupDir(spec), { bigint: true }).ino;
}

function cgroupPids(spec: string): number[] {
  try {
    return readFileSync(path.join(cgroupDir(spec), 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Pids strace should attach to: the filter's pids, processes by name, members of cgroups. */
export function straceTargets(config: AgentConfig, selfPid = process.pid): number[] {
  const alive = (p: number) => {
    try {
      return statSync(`/proc/${p}`).isDirectory();
    } catch {
      return false;
    }
  };
  const pids = new Set<number>([
    ...config.filter.pids.filter(alive),
    ...(config.filter.comms.length ? pidsByName(config.filter.comms) : []),
    ...config.filter.cgroups.flatMap(cgroupPids),
  ]);
  pids.delete(selfPid);
  return [...pids].sort((a, b) => a - b);
}

export function planBpftrace(config: AgentConfig, host: HostFacts): BpftracePlan {
  if (config.sources.bpftrace === 'off')
    return { use: false, reason: 'turned off (--no-bpftrace or sources.bpftrace: off)' };
  const bin = findExecutable(host, 'bpftrace');
  if (!bin)
    return {
      use: false,
      reason: 'bpftrace is not installed (not found on PATH; Debian package: bpftrace)',
    };
  if (host.uid !== 0)
    return {
      use: false,
      reason: `bpftrace needs root; the agent runs as uid ${host.uid}`,
      path: bin,
    };
  const { layout, reason } = readKernelLayout();
  if (!layout) return { use: false, reason: reason!, path: bin };
  for (const spec of config.filter.cgroups) {
    try {
      cgroupId(spec);
    } catch {
      return { use: false, reason: `cgroup ${cgroupDir(spec)} does not exist`, path: bin };
    }
  }
  return {
    use: true,
    reason: `found ${bin}, running as root, kernel BTF present`,
    path: bin,
    layout,
  };
}

function ptraceScope(): number {
  try {
    return Number(readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim());
  } catch {
    return 0; // no Yama: classic same-uid rules
  }
}

export function planStrace(
  config: AgentConfig,
  host: HostFacts,
  bpftraceInUse: boolean,
): StracePlan {
  if (config.sources.strace === 'off')
    return { use: false, reason: 'turned off (--no-strace or sources.strace: off)' };
  if (bpftraceInUse)
    return { use: false, reason: 'not needed: bpftrace is in use and sees the same syscalls' };
  const bin = findExecutable(host, 'strace');
  if (!bin)
    return {
      use: false,
      reason: 'strace is not installed (not found on PATH; Debian package: strace)',
    };
  const filtered =
    config.filter.pids.length + config.filter.comms.length + config.filter.cgroups.length > 0;
  if (!filtered)
    return {
      use: false,
      reason: 'strace needs processes to attach to: give --pid, --comm or --cgroup',
      path: bin,
    };
  const scope = ptraceScope();
  if (host.uid !== 0 && scope >= 2)
    return {
      use: false,
      reason: `attaching needs root (kernel.yama.ptrace_scope=${scope})`,
      path: bin,
    };
  if (host.uid !== 0 && scope === 1)
    return {
      use: false,
      reason: 'attaching to running processes needs root or kernel.yama.ptrace_scope=0 (it is 1)',
      path: bin,
    };
  return {
    use: true,
    reason: `found ${bin}${host.uid === 0 ? ', running as root' : ''}`,
    path: bin,
  };
}
