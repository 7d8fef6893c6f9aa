/**
 * Span attribute names the agent records for the hints (docs/agent.md
 * "Attributes for evidence hints"): one home, read by the agent and by hints.
 */
export const HINT_ATTRS = {
  /** spawn: fork | vfork | posix_spawn | clone. */
  spawnMethod: 'process.spawn.method',
  /** spawn: the parent's open file descriptors when it spawned. */
  parentOpenFds: 'process.parent.open_fds',
  /** spawn: the parent's resident set size in bytes. */
  parentRssBytes: 'process.parent.rss_bytes',
  /** unmount: dirty page-cache bytes at unmount (from /proc/meminfo Dirty). */
  dirtyBytes: 'fs.dirty_bytes',
  /** unmount: bytes under writeback at unmount (/proc/meminfo Writeback). */
  writebackBytes: 'fs.writeback_bytes',
  /** unmount: the filesystem type. */
  fsType: 'fs.type',
  /** fsync: the operation that called it (e.g. unlink, rename, write). */
  fsyncOperation: 'fsync.operation',
  /** fsync: fsyncs the calling operation issued (per span). */
  fsyncCount: 'fsync.count',
} as const;
