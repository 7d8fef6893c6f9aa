/**
 * Which optional tracepoints this kernel has. bpftrace refuses a whole
 * program when one of its tracepoints is missing, so the agent includes the
 * optional parts only when tracefs lists their events (after ensureTracefs).
 */
import { existsSync } from 'node:fs';

const EVENT_DIRS = ['/sys/kernel/tracing/events', '/sys/kernel/debug/tracing/events'];

export function hasTracepoint(category: string, name: string, dirs = EVENT_DIRS): boolean {
  return dirs.some((d) => existsSync(`${d}/${category}/${name}`));
}

/**
 * How an unmount's end past the syscall can be seen (unmount-*.bt): the return to user space
 * (rseq:rseq_update, Linux >= 4.18 with CONFIG_RSEQ) and the thread's next system call
 * (raw_syscalls:sys_enter).
 */
export interface UnmountEndProbes {
  rseq: boolean;
  nextSyscall: boolean;
}

export function unmountEndProbes(dirs = EVENT_DIRS): UnmountEndProbes {
  return {
    rseq: hasTracepoint('rseq', 'rseq_update', dirs),
    nextSyscall: hasTracepoint('raw_syscalls', 'sys_enter', dirs),
  };
}

/** What the agent's unmount spans time with these probes, for the start-up log. */
export function describeUnmountEnd(p: UnmountEndProbes): string {
  const ends = [
    p.rseq ? 'return to user space (rseq:rseq_update)' : undefined,
    p.nextSyscall ? 'next system call (raw_syscalls:sys_enter)' : undefined,
  ].filter(Boolean);
  if (ends.length)
    return (
      `unmount spans end at the unmounting thread's ${ends.join(' or its ')}, so they include ` +
      'the superblock shutdown the kernel defers past the umount syscall'
    );
  return (
    'unmount spans time the umount system call only: this kernel has neither the ' +
    'rseq:rseq_update nor the raw_syscalls:sys_enter tracepoint, so the superblock shutdown ' +
    'it defers to the return to user space (sync, page cache eviction) is not included'
  );
}
