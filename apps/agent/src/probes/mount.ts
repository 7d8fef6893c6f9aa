/**
 * Unmount probe (incident 5): mount a tmpfs or an overlayfs (upper layer on
 * the probe directory's filesystem), write M MB, and time the unmount, which
 * for overlayfs has to flush the dirty upper-layer pages. Root only. The
 * timing is the wall time of umount(8), so it includes about a millisecond of
 * process start; with bpftrace running, the kernel-timed unmount shows too.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { EventSink } from '../events.ts';
import { monotonicToEpochNs } from '../host/clock.ts';
import { dirtyAndWriteback, readMountinfo } from '../host/proc.ts';
import type { Logger } from '../log.ts';
import type { Availability, Probe } from './probe.ts';

const run = promisify(execFile);

export interface MountProbeOptions {
  uid: number;
  mountPath: string | undefined;
  umountPath: string | undefined;
  baseDir: string;
  types: ('tmpfs' | 'overlay')[];
  sizeMb: number;
  log: Logger;
}

function kernelSupports(fs: string): boolean {
  try {
    if (
      readFileSync('/proc/filesystems', 'utf8')
        .split('\n')
        .some((l) => l.split('\t')[1] === fs)
    )
      return true;
  } catch {
    /* fall through */
  }
  // overlay is often a module that mount(2) loads on first use.
  return fs === 'overlay' && existsSync('/sys/module/overlay');
}

function isMountPoint(dir: string): boolean {
  return (readMountinfo('self') ?? []).some((m) => m.mountPoint === dir);
}

export class MountProbe implements Probe {
  readonly name = 'mount';
  private readonly broken = new Set<string>();

  constructor(private readonly opts: MountProbeOptions) {}

  check(): Availability {
    if (this.opts.uid !== 0)
      return { ok: false, reason: `mounting needs root (running as uid ${this.opts.uid})` };
    if (!this.opts.mountPath || !this.opts.umountPath)
      return { ok: false, reason: 'mount/umount not found on PATH (Debian: util-linux)' };
    if (this.opts.types.length === 0)
      return { ok: false, reason: 'no filesystem types configured' };
    const unsupported = this.opts.types.filter(
      (t) => t !== 'tmpfs' && t !== 'overlay' && !kernelSupports(t),
    );
    if (unsupported.length) return { ok: false, reason: `kernel lacks ${unsupported.join(', ')}` };
    return {
      ok: true,
      detail: `mount ${this.opts.types.join(' and ')} under ${this.opts.baseDir}, write ${this.opts.sizeMb} MB, unmount`,
    };
  }

  private dirs(type: string) {
    const base = path.join(this.opts.baseDir, `mount-${type}`);
    return {
      base,
      mnt: path.join(base, 'mnt'),
      lower: path.join(base, 'lower'),
      upper: path.join(base, 'upper'),
      work: path.join(base, 'work'),
    };
  }

  async run(emit: EventSink): Promise<void> {
    for (const type of this.opts.types) {
      if (this.broken.has(type)) continue;
      try {
        await this.once(emit, type);
      } catch (e) {
        this.broken.add(type);
        const msg = ((e as { stderr?: string }).stderr || (e as Error).message).trim();
        this.opts.log.warn(
          `probe mount: ${type} does not work here, skipping it from now on: ${msg}`,
        );
      }
    }
  }

  private async once(emit: EventSink, type: 'tmpfs' | 'overlay'): Promise<void> {
    const d = this.dirs(type);
    if (isMountPoint(d.mnt)) await run(this.opts.umountPath!, ['-l', d.mnt]); // left over from a crash
    if (type === 'overlay') {
      rmSync(d.upper, { recursive: true, force: true });
      rmSync(d.work, { recursive: true, force: true });
      for (const dir of [d.lower, d.upper, d.work]) mkdirSync(dir, { recursive: true });
    }
    mkdirSync(d.mnt, { recursive: true });
    const size = Math.ceil(this.opts.sizeMb * 2 + 16);
    const args =
      type === 'tmpfs'
        ? ['-t', 'tmpfs', '-o', `size=${size}m`, 'onset-probe', d.mnt]
        : [
            '-t',
            'overlay',
            '-o',
            `lowerdir=${d.lower},upperdir=${d.upper},workdir=${d.work}`,
            'onset-probe',
            d.mnt,
          ];
    await run(this.opts.mountPath!, args);
    let written = 0;
    try {
      const fh = await open(path.join(d.mnt, 'data'), 'w');
      const chunk = Buffer.alloc(1024 * 1024, 7);
      try {
        for (
          let left = Math.round(this.opts.sizeMb * 1024 * 1024);
          left > 0;
          left -= chunk.length
        ) {
          const n = Math.min(left, chunk.length);
          await fh.write(chunk, 0, n);
          written += n;
        }
      } finally {
        await fh.close();
      }
    } catch (e) {
      await run(this.opts.umountPath!, ['-l', d.mnt]).catch(() => {});
      throw e;
    }
    const dirty = dirtyAndWriteback();
    const t0 = process.hrtime.bigint();
    let error: string | undefined;
    try {
      await run(this.opts.umountPath!, [d.mnt]);
    } catch (e) {
      error = ((e as { stderr?: string }).stderr || (e as Error).message).trim();
      await run(this.opts.umountPath!, ['-l', d.mnt]).catch(() => {});
    }
    const t1 = process.hrtime.bigint();
    emit({
      kind: 'unmount',
      source: 'probe',
      probe: `mount-${type}`,
      startNs: monotonicToEpochNs(t0),
      durationNs: Number(t1 - t0),
      mountPoint: d.mnt,
      fsType: type,
      dirtyBytes: dirty?.dirtyBytes,
      writebackBytes: dirty?.writebackBytes,
      writtenBytes: written,
      error,
    });
    if (type === 'overlay') rmSync(path.join(d.upper, 'data'), { force: true });
  }

  async cleanup(): Promise<void> {
    for (const type of this.opts.types) {
      const d = this.dirs(type);
      if (isMountPoint(d.mnt)) await run(this.opts.umountPath!, ['-l', d.mnt]).catch(() => {});
      rmSync(d.base, { recursive: true, force: true });
    }
  }
}
