/**
 * Parent fd counts and RSS read from /proc, cached per pid for a second:
 * a parent spawning 200 children a second must not have its 20,000-entry
 * fd directory listed 200 times a second.
 */
import { countOpenFds, processName, rssBytes } from './proc.ts';
import type { ProcessProbe } from '../sources/strace/correlate.ts';

interface Entry {
  at: number;
  fds?: number;
  rss?: number;
  name?: string;
}

export class CachedProcessProbe implements ProcessProbe {
  private readonly cache = new Map<number, Entry>();

  constructor(private readonly maxAgeMs = 1_000) {}

  private entry(pid: number): Entry {
    const now = Date.now();
    let e = this.cache.get(pid);
    if (!e || now - e.at > this.maxAgeMs) {
      if (this.cache.size > 4096) this.cache.clear();
      e = { at: now, fds: countOpenFds(pid), rss: rssBytes(pid), name: processName(pid) };
      this.cache.set(pid, e);
    }
    return e;
  }

  fdCount(pid: number): number | undefined {
    return this.entry(pid).fds;
  }

  rssBytes(pid: number): number | undefined {
    return this.entry(pid).rss;
  }

  name(pid: number): string | undefined {
    return this.entry(pid).name;
  }
}
