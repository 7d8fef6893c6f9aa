/**
 * System Dirty/Writeback bytes sampled once a second. strace prints an
 * umount2 call only when it returns, after the flush; the sample taken just
 * before the call started tells how much dirty data was waiting.
 */
import { dirtyAndWriteback } from './proc.ts';

interface Sample {
  atMs: number;
  dirtyBytes: number;
  writebackBytes: number;
}

export class DirtySampler {
  private readonly samples: Sample[] = [];
  private timer?: NodeJS.Timeout;

  constructor(private readonly keep = 120) {}

  start(intervalMs = 1_000): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  sample(): void {
    const now = dirtyAndWriteback();
    if (!now) return;
    this.samples.push({ atMs: Date.now(), ...now });
    if (this.samples.length > this.keep) this.samples.shift();
  }

  /** The latest sample taken at or before `epochMs` (else the oldest one). */
  at(epochMs: number): { dirtyBytes: number; writebackBytes: number } | undefined {
    for (let i = this.samples.length - 1; i >= 0; i--)
      if (this.samples[i]!.atMs <= epochMs) return this.samples[i];
    return this.samples[0];
  }
}
