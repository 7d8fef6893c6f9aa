/**
 * bpftrace attaches to tracepoints through tracefs. Minimal hosts and
 * containers often boot without it mounted; as root the agent mounts it
 * where bpftrace looks (/sys/kernel/tracing; /sys/kernel/debug/tracing
 * appears with debugfs).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const TRACEFS = '/sys/kernel/tracing';

function syscallTracepointsVisible(): boolean {
  return (
    existsSync(`${TRACEFS}/events/syscalls/sys_enter_fsync`) ||
    existsSync('/sys/kernel/debug/tracing/events/syscalls/sys_enter_fsync')
  );
}

/** Make syscall tracepoints visible; returns what was done or why it is impossible. */
export function ensureTracefs(mountPath: string | undefined): { ok: boolean; note?: string } {
  if (syscallTracepointsVisible()) return { ok: true };
  if (!existsSync(`${TRACEFS}/events`) && mountPath) {
    try {
      execFileSync(mountPath, ['-t', 'tracefs', 'nodev', TRACEFS], { stdio: 'pipe' });
    } catch (e) {
      return {
        ok: false,
        note: `tracefs is not mounted and mounting it failed: ${String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim()}`,
      };
    }
    if (syscallTracepointsVisible()) return { ok: true, note: `mounted tracefs at ${TRACEFS}` };
  }
  return {
    ok: false,
    note: 'the kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS) visible in tracefs',
  };
}
