/**
 * The host's CPU contention per window (docs/agent.md "Host CPU contention"). Windows start at
 * multiples of `windowMs` since the epoch, so the windows of every agent line up (and, at a
 * minute, match Onset's minutes). The counters are read at each window's end, the first time
 * `tick` runs past it; that reading also starts the next window.
 */
import type { HostCpuEvent } from '../events.ts';
import type { CpuContention, CpuContentionSampler } from './cpu-contention.ts';

/** The shortest last window sent at shutdown: 100 jiffies a CPU at USER_HZ 100 (1 % steps). */
const MIN_LAST_WINDOW_MS = 1_000;
const MS = 1_000_000n;

export class HostCpuWindows {
  /** The window `tick` last ran in. */
  private index?: number;

  constructor(
    private readonly sampler: CpuContentionSampler,
    readonly windowMs: number,
    private readonly emit: (e: HostCpuEvent) => void,
  ) {}

  /**
   * Run often (twice a second): past a window's end, read the counters and send the window.
   * Only whole windows are sent: the agent starts mid-window, so the first end it sees is only
   * the baseline, and a tick that missed an end (the agent stalled) skips what it spanned.
   */
  tick(nowMs: number = Date.now(), monoMs: number = performance.now()): void {
    const index = Math.floor(nowMs / this.windowMs);
    const previous = this.index;
    if (index === previous) return;
    this.index = index;
    if (previous === undefined) return;
    const contention = this.sampler.sample(monoMs);
    if (contention && index === previous + 1)
      this.send(contention, previous * this.windowMs, this.windowMs);
  }

  /** At shutdown: the window so far, with its real length, when it is long enough to mean much. */
  flush(nowMs: number = Date.now(), monoMs: number = performance.now()): void {
    if (this.index === undefined) return;
    const startMs = this.index * this.windowMs;
    const contention = this.sampler.sample(monoMs);
    if (contention && nowMs - startMs >= MIN_LAST_WINDOW_MS)
      this.send(contention, startMs, nowMs - startMs);
  }

  private send(c: CpuContention, startMs: number, windowMs: number): void {
    for (const m of c.measurements)
      this.emit({
        kind: 'host-cpu',
        source: 'proc',
        metric: m.metric,
        msPerS: m.msPerS,
        windowMs,
        cpus: c.cpus,
        startNs: BigInt(startMs) * MS,
        durationNs: m.msPerS * 1e6,
      });
  }
}
