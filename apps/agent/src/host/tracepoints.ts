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
 * How an unmount's end past the syscall is seen (unmount-*.bt): the return to user space
 * (rseq:rseq_update, Linux >= 4.18 with CONFIG_RSEQ, threads that registered rseq), the first
 * timer tick that finds the thread back in user space (x86_64: irq_vectors:local_timer_entry;
 * threads without rseq), and the
 * thread's next system call (raw_syscalls:sys_enter: exact, but a probe on every system call of
 * the host, so only when asked for or when there is no tick check).
 */
export interface UnmountEndProbes {
  rseq: boolean;
  tick: boolean;
  nextSyscall: boolean;
}

export function unmountEndProbes(
  opts: { nextSyscall?: boolean } = {},
  dirs = EVENT_DIRS,
  arch: string = process.arch,
): UnmountEndProbes {
  const tick = arch === 'x64' && hasTracepoint('irq_vectors', 'local_timer_entry', dirs);
  const nextSyscall =
    (opts.nextSyscall === true || !tick) && hasTracepoint('raw_syscalls', 'sys_enter', dirs);
  return { rseq: hasTracepoint('rseq', 'rseq_update', dirs), tick, nextSyscall };
}

/** What the agent's unmount spans time with these probes, for the start-up log and doctor. */
export function describeUnmountEnd(p: UnmountEndProbes): string {
  const ends = [
    p.rseq ? 'return to user space (rseq:rseq_update)' : undefined,
    p.nextSyscall ? 'next system call (raw_syscalls:sys_enter)' : undefined,
    p.tick
      ? 'first timer tick back in user space (at most one tick late, for threads without rseq)'
      : undefined,
  ].filter(Boolean);
  if (ends.length) {
    const cost = p.nextSyscall
      ? '; the next-system-call probe runs on every system call of the host (~0.2 µs each, a spawn-heavy workload ~15-30 % slower)'
      : '';
    return (
      `unmount spans end at the unmounting thread's ${ends.join(' or its ')}, so they include ` +
      `the superblock shutdown the kernel defers past the umount syscall${cost}`
    );
  }
  return (
    'unmount spans time the umount system call only: this kernel has none of the ' +
    'rseq:rseq_update, irq_vectors:local_timer_entry (x86_64) and raw_syscalls:sys_enter ' +
    'tracepoints, so the superblock shutdown it defers to the return to user space (sync, ' +
    'page cache eviction) is not included'
  );
}
