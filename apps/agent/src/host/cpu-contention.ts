/**
 * The host's CPU contention between two readings of the kernel's counters
 * (docs/agent.md "Host CPU contention"):
 *
 * - `steal`: of the CPU time the host's tasks wanted in between (/proc/stat's aggregate `cpu`
 *   line, USER_HZ jiffies of every CPU: all of it but idle and iowait), the part the hypervisor
 *   gave to other guests instead, as ms per second wanted (0-1000). Shared VMs lose it for minutes
 *   at a time and every latency on the host steps with it. Per second wanted, not per second of
 *   every CPU: a task is descheduled as often whether the host is half idle or busy, and the
 *   host's own load (a regression burning CPU) must not read as more contention.
 * - `pressure`: the wall time during which some task waited for a CPU (/proc/pressure/cpu,
 *   `some ... total=<µs>`), as ms per second (0-1000). Kernels without PSI have no such file.
 *
 * Pure apart from reading those two files under an injectable proc root (tests use fixtures).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { HostCpuMetric } from '../events.ts';

/** /proc/stat's aggregate line: jiffies summed over all CPUs since boot. */
export interface CpuTimes {
  /** user + nice + system + idle + iowait + irq + softirq + steal (guest time is inside user/nice). */
  totalJiffies: number;
  /** idle + iowait: time no task wanted a CPU. */
  idleJiffies: number;
  stealJiffies: number;
  /** The per-CPU lines (`cpu0`, `cpu1`, ...). */
  cpus: number;
}

/** The aggregate `cpu` line of /proc/stat, or undefined when it has no steal field (before 2.6.11). */
export function parseProcStat(text: string): CpuTimes | undefined {
  const line = /^cpu\s+(.*)$/m.exec(text)?.[1];
  if (!line) return undefined;
  const fields = line.trim().split(/\s+/).slice(0, 8).map(Number);
  if (fields.length < 8 || fields.some((n) => !Number.isFinite(n))) return undefined;
  return {
    totalJiffies: fields.reduce((a, b) => a + b, 0),
    idleJiffies: fields[3]! + fields[4]!,
    stealJiffies: fields[7]!,
    cpus: text.match(/^cpu\d+\s/gm)?.length ?? 0,
  };
}

/** The `some` line's cumulative waiting time (µs) of /proc/pressure/cpu. */
export function parseCpuPressure(text: string): number | undefined {
  const total = /^some\s.*\btotal=(\d+)/m.exec(text)?.[1];
  return total === undefined ? undefined : Number(total);
}

export interface CpuMeasurement {
  metric: HostCpuMetric;
  /** ms per second, 0-1000. */
  msPerS: number;
}

export interface CpuContention {
  cpus: number;
  /** Steal always; pressure when the kernel has PSI. */
  measurements: CpuMeasurement[];
}

/** What this host lets the agent measure, with the reason for what it cannot. */
export type CpuContentionSupport =
  | { ok: true; pressure: true }
  | { ok: true; pressure: false; noPressure: string }
  | { ok: false; reason: string };

const errorText = (e: unknown) => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

interface Reading {
  atMs: number;
  times: CpuTimes;
  pressureUs?: number;
}

export class CpuContentionSampler {
  private last?: Reading;

  constructor(private readonly procRoot = '/proc') {}

  /** Checked once at start, so the log can say what is reported and why not the rest. */
  support(platform: NodeJS.Platform = process.platform): CpuContentionSupport {
    if (platform !== 'linux') return { ok: false, reason: `not Linux (${platform})` };
    const statFile = path.join(this.procRoot, 'stat');
    try {
      if (!parseProcStat(readFileSync(statFile, 'utf8')))
        return { ok: false, reason: `${statFile} has no aggregate cpu line with a steal field` };
    } catch (e) {
      return { ok: false, reason: `cannot read ${statFile}: ${errorText(e)}` };
    }
    const psiFile = path.join(this.procRoot, 'pressure/cpu');
    try {
      if (parseCpuPressure(readFileSync(psiFile, 'utf8')) !== undefined)
        return { ok: true, pressure: true };
      return { ok: true, pressure: false, noPressure: `${psiFile} has no "some ... total=" line` };
    } catch (e) {
      // ENOENT: built without PSI; EOPNOTSUPP: built with it, turned off (psi=0).
      return {
        ok: true,
        pressure: false,
        noPressure: `cannot read ${psiFile}: ${errorText(e)} (a kernel without PSI, or booted with psi=0)`,
      };
    }
  }

  /**
   * Read the counters at `atMs` (a monotonic clock, ms) and return the contention since the
   * previous reading. Undefined for the first reading (it is the baseline) and when a counter went
   * backwards or could not be read: that interval is skipped and this reading, if any, is the next
   * baseline.
   */
  sample(atMs: number): CpuContention | undefined {
    const now = this.read(atMs);
    const before = this.last;
    this.last = now;
    if (!now || !before) return undefined;
    const total = now.times.totalJiffies - before.times.totalJiffies;
    const wanted = total - (now.times.idleJiffies - before.times.idleJiffies);
    const steal = now.times.stealJiffies - before.times.stealJiffies;
    const elapsedUs = (now.atMs - before.atMs) * 1000;
    if (total <= 0 || wanted < 0 || steal < 0 || steal > wanted || elapsedUs <= 0) return undefined;
    // An idle interval (nothing wanted a CPU) had nothing to steal.
    const stealMsPerS = wanted > 0 ? (steal * 1000) / wanted : 0;
    const measurements: CpuMeasurement[] = [{ metric: 'steal', msPerS: stealMsPerS }];
    if (now.pressureUs !== undefined && before.pressureUs !== undefined) {
      const waitedUs = now.pressureUs - before.pressureUs;
      if (waitedUs < 0) return undefined;
      // Reading the file and the clock are a few µs apart: keep the share within its bounds.
      measurements.push({
        metric: 'pressure',
        msPerS: Math.min(1000, (waitedUs * 1000) / elapsedUs),
      });
    }
    return { cpus: now.times.cpus, measurements };
  }

  private read(atMs: number): Reading | undefined {
    let times: CpuTimes | undefined;
    try {
      times = parseProcStat(readFileSync(path.join(this.procRoot, 'stat'), 'utf8'));
    } catch {
      return undefined;
    }
    if (!times) return undefined;
    let pressureUs: number | undefined;
    try {
      pressureUs = parseCpuPressure(readFileSync(path.join(this.procRoot, 'pressure/cpu'), 'utf8'));
    } catch {
      pressureUs = undefined; // no PSI: steal only (said once at start, see support)
    }
    return { atMs, times, pressureUs };
  }
}
