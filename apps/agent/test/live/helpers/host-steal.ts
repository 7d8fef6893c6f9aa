/**
 * The test's own record of how much CPU the hypervisor took from this host
 * during a live run, read from /proc/stat once a second, independent of the
 * agent and the server under test. A live run asserts timings (opened within
 * 5 test minutes, no step before the changes) that only mean something while
 * the host has its CPUs: on this shared VM the hypervisor has taken 35-50 %
 * of the CPU time the host wanted for minutes on end.
 */
import { readFileSync } from 'node:fs';
import { parseProcStat, type CpuTimes } from '../../../src/host/cpu-contention.ts';

/** One second's stolen share of the CPU time the host wanted (ms per second, 0-1000). */
interface Sample {
  atMs: number;
  msPerS: number;
}

export interface StealMonitor {
  /**
   * The worst stolen share over `windowMs` in [fromMs, toMs) (real epoch ms): the highest median
   * of any window's per-second samples; 0 without samples.
   */
  worst(fromMs: number, toMs: number, windowMs: number): number;
  /** The median stolen share of the per-second samples in [fromMs, toMs); 0 without samples. */
  median(fromMs: number, toMs: number): number;
  stop(): void;
}

function read(): CpuTimes | undefined {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

export function monitorSteal(): StealMonitor {
  const samples: Sample[] = [];
  let last = read();
  const timer = setInterval(() => {
    const now = read();
    if (now && last) {
      const wanted = now.totalJiffies - last.totalJiffies - (now.idleJiffies - last.idleJiffies);
      const steal = now.stealJiffies - last.stealJiffies;
      if (wanted > 0 && steal >= 0)
        samples.push({ atMs: Date.now(), msPerS: (Math.min(steal, wanted) * 1000) / wanted });
    }
    last = now;
  }, 1000);
  timer.unref();
  return {
    worst(fromMs, toMs, windowMs) {
      const xs = samples.filter((s) => s.atMs >= fromMs && s.atMs < toMs);
      let worst = 0;
      for (let i = 0; i < xs.length; i++) {
        const w = xs
          .filter((s) => s.atMs >= xs[i]!.atMs && s.atMs < xs[i]!.atMs + windowMs)
          .map((s) => s.msPerS)
          .sort((a, b) => a - b);
        if (w.length) worst = Math.max(worst, w[w.length >> 1]!);
      }
      return worst;
    },
    median(fromMs, toMs) {
      const xs = samples
        .filter((s) => s.atMs >= fromMs && s.atMs < toMs)
        .map((s) => s.msPerS)
        .sort((a, b) => a - b);
      return xs.length ? xs[xs.length >> 1]! : 0;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
