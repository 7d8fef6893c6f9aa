/**
 * Span attribute names the hints read: the names the agent records
 * (docs/agent.md, apps/agent/src/telemetry/spans.ts), so any instrumentation
 * that sets them gets the same hints.
 */
export const HINT_ATTRS = {
  /** spawn: fork | vfork | clone | clone3. */
  spawnMethod: 'onset.spawn.method',
  /** spawn: the parent's open file descriptors when it spawned. */
  parentOpenFds: 'onset.parent.fd_count',
  /** spawn: the parent's resident set size in bytes. */
  parentRssBytes: 'onset.parent.rss_bytes',
  /** unmount: dirty page-cache bytes at unmount (from /proc/meminfo Dirty). */
  dirtyBytes: 'onset.unmount.dirty_bytes',
  /** unmount: bytes under writeback at unmount (/proc/meminfo Writeback). */
  writebackBytes: 'onset.unmount.writeback_bytes',
  /** unmount: the filesystem type. */
  fsType: 'fs.type',
  /** fsync: the operation that called it (e.g. unlink, rename, write); not recorded by the agent yet. */
  fsyncOperation: 'onset.fsync.operation',
  /**
   * fsync: fsyncs the operation issued (per operation span). The agent records it on its
   * `fsync-burst <directory>` operation spans (one thread's burst of fsync/fdatasync calls).
   */
  fsyncCount: 'onset.fsync.count',
  /** fsync: the fsync calls' own time, summed, in nanoseconds (per operation or rate span). */
  fsyncTotalNs: 'onset.fsync.total_ns',
  /** fsync rate spans (`fsync-rate <process>`): fsync-family calls in the window. */
  fsyncCalls: 'onset.fsync.calls',
  /** fsync rate spans: those calls per second of the window. */
  fsyncCallsPerS: 'onset.fsync.calls_per_s',
} as const;
