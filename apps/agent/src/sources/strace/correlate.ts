/**
 * Completed strace syscalls -> agent events. A spawn is the parent's
 * fork/vfork/clone/clone3 start to the end of the child's first successful
 * execve; the two lines can arrive in either order.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { EventSink, FsyncCall, SpawnMethod } from '../../events.ts';
import { RecentMounts, type MountTable } from '../../host/mounts.ts';
import { cloneFlags, fdPath, firstQuoted, type StraceCall } from './parse.ts';

export interface ProcessProbe {
  fdCount(pid: number): number | undefined;
  rssBytes(pid: number): number | undefined;
  name(pid: number): string | undefined;
}

interface DirtySample {
  dirtyBytes: number;
  writebackBytes: number;
}

export interface CorrelatorDeps {
  sink: EventSink;
  mounts: MountTable;
  proc: ProcessProbe;
  /** Dirty/writeback as sampled at or before a wall-clock time (ms). */
  dirtyAt(epochMs: number): DirtySample | undefined;
}

interface ForkStart {
  startSec: number;
  parentPid: number;
  method: SpawnMethod;
  sharedMemory: boolean;
  parentFdCount?: number;
  parentRssBytes?: number;
  parentComm?: string;
  seenAt: number;
}

interface ExecDone {
  endSec: number;
  executable: string;
  seenAt: number;
}

const toNs = (sec: number): bigint => BigInt(Math.round(sec * 1e6)) * 1000n;

export class StraceCorrelator {
  private readonly forks = new Map<number, ForkStart>();
  private readonly execs = new Map<number, ExecDone>();
  private readonly isDir = new Map<string, boolean>();
  private readonly recentMounts = new RecentMounts();
  /** pid -> filesystem type of its last fsopen(), for the move_mount that follows */
  private readonly fsopenType = new Map<number, string>();

  constructor(private readonly deps: CorrelatorDeps) {}

  handle(c: StraceCall): void {
    switch (c.name) {
      case 'fsync':
      case 'fdatasync':
      case 'syncfs':
        return this.fsync(c);
      case 'umount2':
      case 'umount':
        return this.unmount(c);
      case 'fork':
      case 'vfork':
      case 'clone':
      case 'clone3':
        return this.fork(c);
      case 'execve':
      case 'execveat':
        return this.exec(c);
      case 'mount':
        return this.mount(c);
      case 'fsopen':
        if (c.ret !== '-1') this.fsopenType.set(c.pid, firstQuoted(c.args) ?? '');
        return;
      case 'move_mount': {
        const type = this.fsopenType.get(c.pid);
        const quoted = [...c.args.matchAll(/"((?:[^"\\]|\\.)*)"/g)][1];
        const target = quoted ? firstQuoted(quoted[0]) : undefined;
        if (type && target && c.ret === '0') this.recentMounts.remember(target, type);
        return;
      }
    }
  }

  /** A traced process exited: it will not exec any more. */
  exited(pid: number): void {
    this.forks.delete(pid);
  }

  /** Forget halves that never found their other half (forks without exec, lost lines). */
  expire(now = Date.now()): void {
    for (const [pid, f] of this.forks) if (now - f.seenAt > 60_000) this.forks.delete(pid);
    for (const [pid, e] of this.execs) if (now - e.seenAt > 5_000) this.execs.delete(pid);
    if (this.isDir.size > 10_000) this.isDir.clear();
  }

  private fsync(c: StraceCall): void {
    const file = fdPath(c.args);
    const call = c.name as FsyncCall;
    let directory: string | undefined;
    let filePath: string | undefined;
    let mountPoint: string | undefined;
    if (file?.startsWith('/')) {
      if (this.directoryCheck(file)) directory = file;
      else {
        directory = path.dirname(file);
        filePath = file;
      }
      if (call === 'syncfs') mountPoint = this.deps.mounts.containing(c.pid, file)?.mountPoint;
    }
    this.deps.sink({
      kind: 'fsync',
      source: 'strace',
      call,
      startNs: toNs(c.startSec),
      durationNs: Math.round(c.durationSec * 1e9),
      directory,
      path: filePath,
      mountPoint,
      pid: c.pid,
      comm: this.deps.proc.name(c.pid),
      error: c.errno,
    });
  }

  private directoryCheck(p: string): boolean {
    let dir = this.isDir.get(p);
    if (dir === undefined) {
      try {
        dir = statSync(p).isDirectory();
      } catch {
        dir = false; // gone already (a removed WAL file): treat as a file
      }
      this.isDir.set(p, dir);
    }
    return dir;
  }

  /** mount("src", "/target", "type", flags, data) */
  private mount(c: StraceCall): void {
    if (c.ret !== '0') return;
    const strings = [...c.args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(
      (m) => firstQuoted(m[0]) ?? '',
    );
    if (strings.length >= 3) this.recentMounts.remember(strings[1]!, strings[2]!);
  }

  private unmount(c: StraceCall): void {
    const target = firstQuoted(c.args) ?? '?';
    // strace prints the call when it returns: the mount is usually gone, so use the cached table.
    const fsType =
      this.deps.mounts.atMountPoint(c.pid, target)?.fsType ?? this.recentMounts.typeOf(target);
    const dirty = this.deps.dirtyAt(c.startSec * 1000);
    const flagsText = c.args.split(',').slice(1).join(',').trim();
    this.deps.sink({
      kind: 'unmount',
      source: 'strace',
      startNs: toNs(c.startSec),
      durationNs: Math.round(c.durationSec * 1e9),
      mountPoint: target,
      fsType,
      dirtyBytes: dirty?.dirtyBytes,
      writebackBytes: dirty?.writebackBytes,
      flags: /^\d+$/.test(flagsText) ? Number(flagsText) : undefined,
      pid: c.pid,
      comm: this.deps.proc.name(c.pid),
      error: c.errno,
    });
  }

  private fork(c: StraceCall): void {
    const child = Number(c.ret);
    if (!(child > 0)) return;
    const flags = cloneFlags(c.args);
    if (flags.has('CLONE_THREAD')) return;
    const method = c.name as SpawnMethod;
    const start: ForkStart = {
      startSec: c.startSec,
      parentPid: c.pid,
      method,
      sharedMemory: method === 'vfork' || flags.has('CLONE_VM'),
      parentFdCount: this.deps.proc.fdCount(c.pid),
      parentRssBytes: this.deps.proc.rssBytes(c.pid),
      parentComm: this.deps.proc.name(c.pid),
      seenAt: Date.now(),
    };
    const exec = this.execs.get(child);
    if (exec) {
      this.execs.delete(child);
      this.emitSpawn(child, start, exec);
    } else this.forks.set(child, start);
  }

  private exec(c: StraceCall): void {
    if (c.ret !== '0') return;
    const done: ExecDone = {
      endSec: c.startSec + c.durationSec,
      executable: firstQuoted(c.args) ?? '?',
      seenAt: Date.now(),
    };
    const start = this.forks.get(c.pid);
    if (start) {
      this.forks.delete(c.pid);
      this.emitSpawn(c.pid, start, done);
    } else if (!this.execs.has(c.pid)) this.execs.set(c.pid, done);
  }

  private emitSpawn(child: number, f: ForkStart, e: ExecDone): void {
    this.deps.sink({
      kind: 'spawn',
      source: 'strace',
      startNs: toNs(f.startSec),
      durationNs: Math.max(0, Math.round((e.endSec - f.startSec) * 1e6) * 1000), // strace times are microseconds
      executable: e.executable,
      method: f.method,
      sharedMemory: f.sharedMemory,
      pid: child,
      parentPid: f.parentPid,
      parentComm: f.parentComm,
      parentFdCount: f.parentFdCount,
      parentRssBytes: f.parentRssBytes,
    });
  }
}
