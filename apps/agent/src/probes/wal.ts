/**
 * WAL-removal probe (incident 3): create N files, then remove them the two
 * ways a database can: fsync the directory after every unlink, or once at
 * the end. Each directory fsync is its own span (series: the directory); each
 * removal pass is one span named after the pattern, whose duration is the
 * sum of its unlink and fsync times (the probe yields to the event loop
 * between operations so the agent keeps reading its tracers).
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { EventSink } from '../events.ts';
import { monotonicToEpochNs } from '../host/clock.ts';
import { breathe, type Availability, type Probe } from './probe.ts';

const FILE_BYTES = 8192;

export class WalProbe implements Probe {
  readonly name = 'wal';
  readonly dir: string;

  constructor(
    baseDir: string,
    private readonly files: number,
  ) {
    this.dir = path.join(baseDir, 'wal');
  }

  check(): Availability {
    try {
      mkdirSync(this.dir, { recursive: true });
      return {
        ok: true,
        detail: `remove ${this.files} files in ${this.dir}, fsync after each and once at the end`,
      };
    } catch (e) {
      return {
        ok: false,
        reason: `cannot create ${this.dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      };
    }
  }

  async run(emit: EventSink): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    await this.pass(emit, 'each');
    await this.pass(emit, 'once');
  }

  private async pass(emit: EventSink, mode: 'each' | 'once'): Promise<void> {
    for (const leftover of readdirSync(this.dir))
      rmSync(path.join(this.dir, leftover), { force: true });
    const names = Array.from({ length: this.files }, (_, i) =>
      path.join(this.dir, `seg-${String(i).padStart(6, '0')}`),
    );
    const data = Buffer.alloc(FILE_BYTES, 1);
    for (const n of names) writeFileSync(n, data);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd); // settle the creations so the timed part is only removal
      let firstStart: bigint | undefined;
      let total = 0;
      let fsyncs = 0;
      const fsync = (): void => {
        const t0 = process.hrtime.bigint();
        fsyncSync(dirFd);
        const t1 = process.hrtime.bigint();
        total += Number(t1 - t0);
        fsyncs++;
        emit({
          kind: 'fsync',
          source: 'probe',
          probe: 'wal',
          call: 'fsync',
          startNs: monotonicToEpochNs(t0),
          durationNs: Number(t1 - t0),
          directory: this.dir,
        });
      };
      for (const n of names) {
        const t0 = process.hrtime.bigint();
        firstStart ??= t0;
        unlinkSync(n);
        total += Number(process.hrtime.bigint() - t0);
        if (mode === 'each') fsync();
        await breathe();
      }
      if (mode === 'once') fsync();
      emit({
        kind: 'fsync',
        source: 'probe',
        probe: 'wal',
        call: 'fsync',
        label:
          mode === 'each'
            ? `wal-removal: fsync after each unlink (${this.files} files)`
            : `wal-removal: one fsync at the end (${this.files} files)`,
        startNs: monotonicToEpochNs(firstStart!),
        durationNs: total,
        directory: this.dir,
        operations: this.files,
        fsyncs,
      });
    } finally {
      closeSync(dirFd);
    }
  }

  async cleanup(): Promise<void> {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
