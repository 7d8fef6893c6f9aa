/**
 * What the agent measures, independent of where it came from (bpftrace,
 * strace, a synthetic probe, or the host's own counters in /proc). Sources
 * produce these; telemetry/spans.ts turns them into OpenTelemetry spans. Times
 * are Unix epoch nanoseconds.
 */
export type SourceName = 'bpftrace' | 'strace' | 'probe' | 'proc';

/** fork: a full copy of the parent (fork, or clone without CLONE_VM); vfork: the child borrows the parent's memory until exec (vfork, posix_spawn). */
export type SpawnMethod = 'fork' | 'vfork' | 'clone' | 'clone3';

interface Timed {
  source: SourceName;
  startNs: bigint;
  durationNs: number;
  /** Synthetic probes name their own series (e.g. "true (5000 fds)"). */
  label?: string;
  /** Which synthetic probe made it. */
  probe?: string;
  error?: string;
}

export interface SpawnEvent extends Timed {
  kind: 'spawn';
  /** The executable exec'd (a path). */
  executable: string;
  /** The syscall that created the child. */
  method?: SpawnMethod;
  /** True when the child shared the parent's memory (CLONE_VM: vfork, posix_spawn). */
  sharedMemory?: boolean;
  cloneFlags?: number;
  pid?: number;
  parentPid?: number;
  parentComm?: string;
  parentFdCount?: number;
  parentRssBytes?: number;
}

export type FsyncCall = 'fsync' | 'fdatasync' | 'syncfs';

export interface FsyncEvent extends Timed {
  kind: 'fsync';
  call: FsyncCall;
  /** The directory synced, or the directory of the file synced. */
  directory?: string;
  /** The file synced, when it is not a directory. */
  path?: string;
  /** For syncfs: the mount point of the filesystem synced. */
  mountPoint?: string;
  pid?: number;
  /** The calling thread (bpftrace; strace's pid is already the thread). */
  tid?: number;
  comm?: string;
  /** Synthetic batch spans (WAL removal) carry the count of operations they cover. */
  operations?: number;
  /** Synthetic batch spans: the fsyncs the batch issued (onset.fsync.count, like an operation). */
  fsyncs?: number;
}

/**
 * Where an unmount's time ends: the umount syscall's exit (all the kernel showed), or past it,
 * where the superblock shutdown the kernel defers to the return to user space is done: that
 * return itself, the thread's next system call, the first timer tick that found it back in
 * user space (at most a tick late, see endUncertaintyNs), or its exit (see
 * unmount.bt).
 */
export type UnmountEnd =
  'syscall-exit' | 'return-to-user' | 'next-syscall' | 'thread-exit' | 'next-tick';

export interface UnmountEvent extends Timed {
  kind: 'unmount';
  /** The umount syscall's own duration, when the span goes past it (measuredUntil). */
  syscallNs?: number;
  measuredUntil?: UnmountEnd;
  /**
   * For 'next-tick': how long before the end the shutdown was last seen still running, so the
   * true end lies within [duration - this, duration].
   */
  endUncertaintyNs?: number;
  mountPoint: string;
  fsType?: string;
  /** System-wide Dirty and Writeback bytes when the unmount started. */
  dirtyBytes?: number;
  writebackBytes?: number;
  /** Bytes the probe wrote before unmounting (synthetic probe only). */
  writtenBytes?: number;
  flags?: number;
  pid?: number;
  comm?: string;
}

export interface ServerTimingEntry {
  name: string;
  durMs?: number;
  desc?: string;
}

export interface RequestEvent extends Timed {
  kind: 'request';
  method: string;
  url: string;
  statusCode?: number;
  serverTiming: ServerTimingEntry[];
  serverTimingHeader?: string;
  /** W3C trace context sent with the request, so the callee's span pairs with ours. */
  traceId: string;
  spanId: string;
}

/**
 * An operation seen through its fsyncs (aggregate/fsync-operations.ts): a burst of
 * fsync/fdatasync calls by one thread on one directory, each call starting within the
 * configured gap of the previous one's end. Its duration is the burst's wall time.
 */
export interface FsyncOperationEvent extends Timed {
  kind: 'fsync-operation';
  /** fsync-family calls in the burst. */
  count: number;
  /** The calls' own time, summed (the rest of the wall time is the thread's work between them). */
  syscallNs: number;
  /** The slowest call. */
  maxCallNs: number;
  /** Calls that failed. */
  errors: number;
  /** The directory synced (or the directory of the files synced), when known. */
  directory?: string;
  pid?: number;
  tid?: number;
  comm?: string;
  /** The idle time that ends a burst, ms (the configured gap). */
  gapMs: number;
  /** True when the burst was cut at the maximum length rather than ended by idle time. */
  cut: boolean;
}

/**
 * Per process name and window (a minute by default): how often it called fsync-family
 * calls and how long it spent in them. durationNs is the time in the calls per second of
 * the window, so the series reads "ms of fsync per second".
 */
export interface FsyncRateEvent extends Timed {
  kind: 'fsync-rate';
  comm: string;
  windowMs: number;
  /** Calls in the window. */
  calls: number;
  /** Time in the calls in the window, summed. */
  syscallNs: number;
  /** Distinct processes with that name that called them. */
  processes: number;
}

/** What a host CPU series measures (host/cpu-contention.ts). */
export type HostCpuMetric = 'steal' | 'pressure';

/**
 * The host's CPU contention over one window (host/cpu-windows.ts), read by the agent itself
 * from /proc, about no process: `steal`, CPU time the hypervisor gave to other guests per second
 * of CPU time the host wanted; `pressure`, time during which some task waited for a CPU per second
 * (PSI). startNs is the window's start; durationNs is msPerS milliseconds, so the series reads
 * "ms per second".
 */
export interface HostCpuEvent extends Timed {
  kind: 'host-cpu';
  source: 'proc';
  metric: HostCpuMetric;
  /** ms per second, 0-1000. */
  msPerS: number;
  /** The window's length, ms (shorter than configured only for the last one, at shutdown). */
  windowMs: number;
  /** CPUs the kernel counts in /proc/stat. */
  cpus: number;
}

export type AgentEvent =
  | SpawnEvent
  | FsyncEvent
  | UnmountEvent
  | RequestEvent
  | FsyncOperationEvent
  | FsyncRateEvent
  | HostCpuEvent;

/**
 * Traced from the host's processes (bpftrace, strace): their names come from whatever runs there,
 * so they are folded, scoped and capped. Probes and /proc readings are the agent's own.
 */
export const isTraced = (e: { source: SourceName }): boolean =>
  e.source === 'bpftrace' || e.source === 'strace';

/** Where sources deliver events. */
export type EventSink = (event: AgentEvent) => void;
