/**
 * bpftrace JSON tuples (see programs/*.bt for their fields) -> agent events.
 */
import { constants } from 'node:os';
import type { EventSink, FsyncCall, SpawnMethod, UnmountEnd, UnmountEvent } from '../../events.ts';
import { pathThroughMount, RecentMounts, type MountTable } from '../../host/mounts.ts';

const METHODS: (SpawnMethod | undefined)[] = [undefined, 'fork', 'vfork', 'clone', 'clone3'];
const FSYNC_CALLS: (FsyncCall | undefined)[] = [undefined, 'fsync', 'fdatasync', 'syncfs'];
const CLONE_VM = 0x100;
/** unmount.bt's end codes. */
const UNMOUNT_ENDS: UnmountEnd[] = [
  'syscall-exit',
  'return-to-user',
  'next-syscall',
  'thread-exit',
  'next-tick',
];
const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));
const MAX_DIRS = 20_000;
/**
 * How long an fsync waits for the "dir" lines naming its directory (printed by another CPU, so
 * they can arrive after it) before it is sent without a path; generous, for a loaded machine.
 */
const DIR_WAIT_MS = 3_000;
/**
 * How long an unmount whose filesystem type is not known yet waits for the mount call's line:
 * each CPU has its own output buffer, and on a loaded host the agent can read the unmount
 * (from one CPU) before the mount (from another), after the mount is gone from mountinfo.
 */
const MOUNT_WAIT_MS = 3_000;
/** Event slots printed by flush.bt, and the never-cleared kernel-side counters. */
const BUFFER_KIND = new Map<string, 'fsync' | 'spawn'>(
  [0, 1, 2].flatMap((i) => [
    [`@fsync_b${i}`, 'fsync'],
    [`@spawn_b${i}`, 'spawn'],
  ]),
);
const COUNT_KIND = new Map<string, 'fsync' | 'spawn'>([
  ['@fsync_count', 'fsync'],
  ['@spawn_count', 'spawn'],
]);

export interface DecoderDeps {
  sink: EventSink;
  mounts: MountTable;
  /** CLOCK_MONOTONIC ns -> Unix epoch ns. */
  toEpochNs(monoNs: bigint): bigint;
  pageSize: number;
  dirtyNow(): { dirtyBytes: number; writebackBytes: number } | undefined;
  /** Events the kernel saw that never reached the agent (full or late buffers). */
  onLost?(kind: 'fsync' | 'spawn', count: number): void;
  /**
   * unmount-tick.bt found no saved user registers at the top of an unmounting thread's kernel
   * stack (unknown stack layout): that thread's unmount can only end at its return to user
   * space (rseq), its next system call (when that probe is on) or its exit.
   */
  onUnmountNoRegs?(tid: number): void;
}

interface UnmountStart {
  pid: number;
  comm: string;
  mountPoint: string;
  flags: number;
  fsType?: string;
  dirtyBytes?: number;
  writebackBytes?: number;
}

interface UnmountFinish {
  durationNs: number;
  ret: number;
  syscallNs: number;
  end?: UnmountEnd;
  uncertaintyNs: number;
  at: number;
}

function errorName(ret: number): string | undefined {
  return ret < 0 ? (ERRNO_NAMES.get(-ret) ?? `errno ${-ret}`) : undefined;
}

export class BpftraceDecoder {
  /** directory key -> components, leaf first, as the "dir" tuples arrive */
  private readonly dirParts = new Map<number, string[]>();
  /** directory key -> path from the filesystem root */
  private readonly dirs = new Map<number, string>();
  private readonly unmountStarts = new Map<string, UnmountStart>();
  private readonly unmountEnds = new Map<string, UnmountFinish>();
  /** fsyncs read before the "dir" lines naming their directory (different CPUs' output can interleave) */
  private pending: { t: unknown[]; o: number; at: number }[] = [];
  /** Buffered events received, and missing ones found by comparing with the kernel's counts. */
  readonly received = { fsync: 0, spawn: 0 };
  readonly lost = { fsync: 0, spawn: 0 };
  private readonly countedBefore: { fsync?: number; spawn?: number } = {};
  private readonly recentMounts = new RecentMounts();
  /** tid -> filesystem type of the mount call in progress (see unmount.bt) */
  private readonly mountTypes = new Map<number, string>();
  /** Unmounts waiting for their mount call's line to name the type (MOUNT_WAIT_MS). */
  private heldUnmounts: { event: UnmountEvent; at: number }[] = [];
  private heldTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: DecoderDeps) {}

  /** Send every held unmount now, typed or not (the tracer stopped). */
  flush(): void {
    this.releaseUnmounts(true);
  }

  /**
   * A printed map from flush.bt: an event slot {"@fsync_b0": {"cpu,seq": [fields...]}}
   * or a kernel-side event count {"@fsync_count": n}.
   */
  handleBuffers(data: Record<string, unknown>): void {
    for (const name in data) {
      const value = data[name];
      const kind = BUFFER_KIND.get(name);
      if (kind && value && typeof value === 'object') {
        // Hot path (one entry per traced event): no per-entry arrays or closures.
        const entries = value as Record<string, unknown>;
        const emit = kind === 'fsync' ? this.fsync : this.spawn;
        for (const key in entries) {
          const fields = entries[key];
          if (!Array.isArray(fields)) continue;
          this.received[kind]++;
          emit.call(this, fields, 0);
        }
      }
      const counted = COUNT_KIND.get(name);
      if (counted && typeof value === 'number') this.checkCount(counted, value);
    }
    this.retryPending();
  }

  /** Events counted in the kernel by the previous count print must all have arrived by now. */
  private checkCount(kind: 'fsync' | 'spawn', kernelCount: number): void {
    const due = this.countedBefore[kind];
    this.countedBefore[kind] = kernelCount;
    if (due === undefined) return;
    const missing = due - this.received[kind] - this.lost[kind];
    if (missing > 0) {
      this.lost[kind] += missing;
      this.deps.onLost?.(kind, missing);
    }
  }

  handle(t: unknown[]): void {
    switch (t[0]) {
      case 'dir':
        return this.dir(t);
      case 'fsync':
        return this.fsync(t, 1);
      case 'spawn':
        return this.spawn(t, 1);
      case 'umount_start':
        return this.unmountStart(t);
      case 'umount':
        return this.unmountEnd(t);
      case 'umount_noregs':
        return this.deps.onUnmountNoRegs?.(t[1] as number);
      case 'mount_type':
        this.mountTypes.set(t[1] as number, t[2] as string);
        if (this.mountTypes.size > 1_000) this.mountTypes.clear();
        return;
      case 'mount': {
        const type = this.mountTypes.get(t[2] as number);
        this.mountTypes.delete(t[2] as number);
        if (type) this.recentMounts.remember(t[3] as string, type);
        if (type && this.heldUnmounts.length) this.releaseUnmounts(false);
        return;
      }
    }
  }

  private dir(t: unknown[]): void {
    const [, key, depth, name] = t as [string, number, number, string];
    if (depth === 0) this.dirParts.set(key, [name]);
    else this.dirParts.get(key)?.push(name);
  }

  /** Path of a directory key from the filesystem root, finishing any components still pending. */
  private dirPath(key: number): string | undefined {
    const parts = this.dirParts.get(key);
    if (parts) {
      this.dirParts.delete(key);
      const reachedRoot = parts[parts.length - 1] === '/';
      const names = parts.filter((p) => p !== '/').reverse();
      const p = `${reachedRoot ? '' : '/…'}/${names.join('/')}`.replace(/\/+$/, '') || '/';
      this.dirs.delete(key); // re-insert: Map order doubles as least-recently-sent order
      this.dirs.set(key, p);
      if (this.dirs.size > MAX_DIRS) this.dirs.delete(this.dirs.keys().next().value!);
    }
    return this.dirs.get(key);
  }

  /** Emit held fsyncs whose directory is now known, or that waited long enough (then without a path). */
  private retryPending(): void {
    if (this.pending.length === 0) return;
    const now = Date.now();
    const waiting = this.pending;
    this.pending = [];
    for (const p of waiting) {
      const key = p.t[p.o + 7] as number;
      if (this.dirs.has(key) || this.dirParts.has(key) || now - p.at > DIR_WAIT_MS)
        this.fsync(p.t, p.o, true);
      else this.pending.push(p);
    }
  }

  /** An fsync tuple (see fsync.bt) starting at index `o` of `t`. */
  private fsync(t: unknown[], o: number, retry = false): void {
    const pid = t[o + 1] as number;
    const key = t[o + 7] as number;
    const call = FSYNC_CALLS[t[o] as number] ?? 'fsync';
    if (key && !retry && !this.dirs.has(key) && !this.dirParts.has(key)) {
      this.pending.push({ t, o, at: Date.now() });
      return;
    }
    let directory: string | undefined;
    let filePath: string | undefined;
    let mountPoint: string | undefined;
    const fsPath = key ? this.dirPath(key) : undefined;
    if (fsPath !== undefined) {
      const mount = this.deps.mounts.byId(pid, t[o + 8] as number);
      directory = mount ? pathThroughMount(mount, fsPath) : fsPath;
      const name = t[o + 10] as string;
      // A dentry name is one path component: joining needs no normalisation.
      if (!t[o + 9] && name) filePath = directory === '/' ? `/${name}` : `${directory}/${name}`;
      if (call === 'syncfs') mountPoint = mount?.mountPoint;
    }
    this.deps.sink({
      kind: 'fsync',
      source: 'bpftrace',
      call,
      startNs: this.deps.toEpochNs(BigInt(t[o + 4] as number)),
      durationNs: t[o + 5] as number,
      directory,
      path: filePath,
      mountPoint,
      pid,
      tid: t[o + 2] as number,
      comm: t[o + 3] as string,
      error: errorName(t[o + 6] as number),
    });
  }

  /** A spawn tuple (see spawn.bt) starting at index `o` of `t`. */
  private spawn(t: unknown[], o: number): void {
    const flags = t[o + 4] as number;
    const fds = t[o + 7] as number;
    const maxFds = t[o + 8] as number;
    const filename = t[o + 10] as string;
    this.deps.sink({
      kind: 'spawn',
      source: 'bpftrace',
      startNs: this.deps.toEpochNs(BigInt(t[o + 5] as number)),
      durationNs: t[o + 6] as number,
      executable: filename || (t[o + 11] as string),
      method: METHODS[t[o + 3] as number],
      sharedMemory: (flags & CLONE_VM) !== 0,
      cloneFlags: flags,
      pid: t[o] as number,
      parentPid: t[o + 1] as number,
      parentComm: t[o + 2] as string,
      // The in-kernel count stops at 262,144 fds; beyond that the table size is the better figure.
      parentFdCount: maxFds > 262_144 && fds >= 262_144 ? maxFds : fds,
      parentRssBytes: Math.max(0, t[o + 9] as number) * this.deps.pageSize,
    });
  }

  private unmountStart(t: unknown[]): void {
    const [, pid, tid, comm, target, flags, startMono] = t as [
      string,
      number,
      number,
      string,
      string,
      number,
      number,
    ];
    // Printed at syscall entry: the mount still exists, and the dirty data is not flushed yet.
    const mount = this.deps.mounts.atMountPoint(pid, target, true);
    const dirty = this.deps.dirtyNow();
    const fsType = mount?.fsType ?? this.recentMounts.typeOf(target);
    const start: UnmountStart = {
      pid,
      comm,
      mountPoint: target,
      flags,
      fsType,
      dirtyBytes: dirty?.dirtyBytes,
      writebackBytes: dirty?.writebackBytes,
    };
    const key = `${tid}:${startMono}`;
    const end = this.unmountEnds.get(key);
    if (end) {
      this.unmountEnds.delete(key);
      this.emitUnmount(start, startMono, end);
    } else this.unmountStarts.set(key, start);
  }

  private unmountEnd(t: unknown[]): void {
    const [, , tid, startMono, durationNs, ret, syscallNs, end_, uncertaintyNs] = t as number[] as [
      unknown,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const key = `${tid}:${startMono}`;
    const start = this.unmountStarts.get(key);
    const end = {
      durationNs,
      ret,
      syscallNs,
      end: UNMOUNT_ENDS[end_],
      uncertaintyNs: uncertaintyNs ?? 0,
      at: Date.now(),
    };
    if (start) {
      this.unmountStarts.delete(key);
      this.emitUnmount(start, startMono, end);
    } else {
      // Entry printed on another CPU, still in flight: wait for it briefly.
      this.unmountEnds.set(key, end);
      for (const [k, e] of this.unmountEnds)
        if (Date.now() - e.at > 10_000) this.unmountEnds.delete(k);
    }
  }

  private emitUnmount(s: UnmountStart, startMono: number, e: UnmountFinish): void {
    const event: UnmountEvent = {
      kind: 'unmount',
      source: 'bpftrace',
      startNs: this.deps.toEpochNs(BigInt(startMono)),
      durationNs: e.durationNs,
      syscallNs: e.syscallNs,
      measuredUntil: e.end,
      endUncertaintyNs: e.end === 'next-tick' ? e.uncertaintyNs : undefined,
      mountPoint: s.mountPoint,
      // The mount call's event may be read after the unmount's start (another CPU's buffer).
      fsType: s.fsType ?? this.recentMounts.typeOf(s.mountPoint),
      dirtyBytes: s.dirtyBytes,
      writebackBytes: s.writebackBytes,
      flags: s.flags,
      pid: s.pid,
      comm: s.comm,
      error: errorName(e.ret),
    };
    if (event.fsType !== undefined) return this.deps.sink(event);
    this.heldUnmounts.push({ event, at: Date.now() });
    this.scheduleRelease();
  }

  /** Held unmounts whose type is now known, or that waited long enough (all when `all`). */
  private releaseUnmounts(all: boolean): void {
    const now = Date.now();
    const waiting = this.heldUnmounts;
    this.heldUnmounts = [];
    for (const h of waiting) {
      const fsType = this.recentMounts.typeOf(h.event.mountPoint);
      if (fsType !== undefined) this.deps.sink({ ...h.event, fsType });
      else if (all || now - h.at >= MOUNT_WAIT_MS) this.deps.sink(h.event);
      else this.heldUnmounts.push(h);
    }
    clearTimeout(this.heldTimer);
    this.heldTimer = undefined;
    this.scheduleRelease();
  }

  /** A timer for the oldest held unmount's deadline (unref: it never keeps the agent up). */
  private scheduleRelease(): void {
    if (this.heldTimer || this.heldUnmounts.length === 0) return;
    const wait = MOUNT_WAIT_MS - (Date.now() - this.heldUnmounts[0]!.at);
    this.heldTimer = setTimeout(
      () => {
        this.heldTimer = undefined;
        this.releaseUnmounts(false);
      },
      Math.max(0, wait),
    ).unref();
  }
}
