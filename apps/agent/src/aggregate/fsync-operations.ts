/**
 * Operation-level fsync measurement (docs/agent.md "Operations").
 *
 * A per-call fsync series misses the change that matters most: an operation that
 * starts issuing many more fsyncs (one per unlink instead of one per batch) while
 * each call gets cheaper. So traced fsync/fdatasync calls are also grouped:
 *
 * - an **operation** is a burst of calls by one thread on one directory, each
 *   starting within `gapMs` of the previous call's end; its duration is the burst's
 *   wall time (first call's start to last call's end), and it carries the number
 *   of calls and their summed time. A burst longer than `maxBurstMs` is cut there.
 * - a **rate** is, per process name and window (a minute), the calls and the time
 *   spent in them per second.
 *
 * Events arrive late and a little out of order (bpftrace prints per CPU every
 * 100 ms; the decoder holds an fsync up to 3 s for its directory's name), so calls
 * are kept per thread and a burst is emitted only once no call that could extend
 * it can still arrive: `latenessMs` after its end plus the gap. A call arriving
 * later than that starts a new operation.
 *
 * Pure apart from the clock it is given: `flush(nowNs)` decides, tests drive it.
 */
import type {
  FsyncCall,
  FsyncEvent,
  FsyncOperationEvent,
  FsyncRateEvent,
  SourceName,
} from '../events.ts';
import { normalizeComponent } from '../telemetry/normalize.ts';

export interface OperationOptions {
  /** Idle time (ms) between a thread's calls that ends an operation. */
  gapMs: number;
  /** An operation is cut at this wall time (ms), so a thread that never idles still reports. */
  maxBurstMs: number;
  /** Rate window (ms). */
  windowMs: number;
  /** How late (ms) a call may arrive after it ended and still join its operation or window. */
  latenessMs: number;
}

export const OPERATION_DEFAULTS: OperationOptions = {
  gapMs: 100,
  maxBurstMs: 10_000,
  windowMs: 60_000,
  latenessMs: 5_000,
};

/** Calls kept per thread before the oldest operations are emitted regardless of lateness. */
const MAX_CALLS_PER_THREAD = 50_000;
const MS = 1_000_000n;

/** Which calls make operations: the ones a program issues per file (syncfs is per filesystem). */
const GROUPED: ReadonlySet<FsyncCall> = new Set<FsyncCall>(['fsync', 'fdatasync']);

interface Call {
  startNs: bigint;
  endNs: bigint;
  durationNs: number;
  error: boolean;
}

interface Thread {
  source: SourceName;
  pid?: number;
  tid?: number;
  comm?: string;
  directory?: string;
  calls: Call[];
}

interface Window {
  source: SourceName;
  index: bigint;
  comm: string;
  calls: number;
  syscallNs: number;
  pids: Set<number>;
}

export type OperationSink = (e: FsyncOperationEvent | FsyncRateEvent) => void;

export class FsyncOperations {
  private readonly threads = new Map<string, Thread>();
  private readonly windows = new Map<string, Window>();
  private readonly gapNs: bigint;
  private readonly maxBurstNs: bigint;
  private readonly windowNs: bigint;
  private readonly latenessNs: bigint;

  constructor(
    readonly options: OperationOptions,
    private readonly emit: OperationSink,
  ) {
    this.gapNs = BigInt(Math.round(options.gapMs * 1e6));
    this.maxBurstNs = BigInt(Math.round(options.maxBurstMs * 1e6));
    this.windowNs = BigInt(Math.round(options.windowMs * 1e6));
    this.latenessNs = BigInt(Math.round(options.latenessMs * 1e6));
  }

  /** Whether this fsync event takes part (traced calls of a process; not the agent's own probes). */
  static accepts(e: FsyncEvent): boolean {
    return e.source !== 'probe' && GROUPED.has(e.call) && (e.tid ?? e.pid) !== undefined;
  }

  add(e: FsyncEvent): void {
    if (!FsyncOperations.accepts(e)) return;
    const tid = e.tid ?? e.pid!;
    const key = `${e.pid ?? ''}:${tid}:${e.directory ?? ''}`;
    let t = this.threads.get(key);
    if (!t) {
      t = { source: e.source, pid: e.pid, tid, comm: e.comm, directory: e.directory, calls: [] };
      this.threads.set(key, t);
    }
    t.comm = e.comm ?? t.comm;
    const endNs = e.startNs + BigInt(Math.round(e.durationNs));
    t.calls.push({
      startNs: e.startNs,
      endNs,
      durationNs: e.durationNs,
      error: e.error !== undefined,
    });
    if (t.calls.length > MAX_CALLS_PER_THREAD) this.flushThread(key, t, undefined, true);

    const comm = normalizeComponent(e.comm ?? `pid ${e.pid}`);
    const index = e.startNs / this.windowNs;
    const wkey = `${index}:${comm}`;
    let w = this.windows.get(wkey);
    if (!w) {
      w = { source: e.source, index, comm, calls: 0, syscallNs: 0, pids: new Set() };
      this.windows.set(wkey, w);
    }
    w.calls++;
    w.syscallNs += e.durationNs;
    if (e.pid !== undefined) w.pids.add(e.pid);
  }

  /**
   * Emit every operation and window that no late call can change any more at `nowNs`
   * (epoch ns); with `all`, everything held (shutdown).
   */
  flush(nowNs: bigint, all = false): void {
    for (const [key, t] of this.threads) this.flushThread(key, t, nowNs, all);
    for (const [key, w] of this.windows) {
      const endNs = (w.index + 1n) * this.windowNs;
      if (!all && endNs + this.latenessNs > nowNs) continue;
      this.windows.delete(key);
      const startNs = w.index * this.windowNs;
      this.emit({
        kind: 'fsync-rate',
        source: w.source,
        startNs,
        durationNs: (w.syscallNs * 1000) / this.options.windowMs,
        comm: w.comm,
        windowMs: this.options.windowMs,
        calls: w.calls,
        syscallNs: w.syscallNs,
        processes: w.pids.size,
      });
    }
  }

  /** Calls and windows held (for tests and the log). */
  get held(): { calls: number; windows: number } {
    let calls = 0;
    for (const t of this.threads.values()) calls += t.calls.length;
    return { calls, windows: this.windows.size };
  }

  /**
   * Split a thread's calls into bursts and emit the finished ones. With `nowNs` undefined and
   * `force`, all but the newest burst are emitted (the thread holds too many calls).
   */
  private flushThread(key: string, t: Thread, nowNs: bigint | undefined, force: boolean): void {
    const calls = t.calls;
    if (calls.length === 0) {
      this.threads.delete(key);
      return;
    }
    calls.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
    const bursts: { from: number; to: number; endNs: bigint; cut: boolean }[] = [];
    let from = 0;
    let endNs = calls[0]!.endNs;
    for (let i = 1; i < calls.length; i++) {
      const c = calls[i]!;
      const idle = c.startNs - endNs > this.gapNs;
      const tooLong = c.startNs - calls[from]!.startNs >= this.maxBurstNs;
      if (idle || tooLong) {
        bursts.push({ from, to: i, endNs, cut: !idle });
        from = i;
        endNs = c.endNs;
      } else if (c.endNs > endNs) endNs = c.endNs;
    }
    bursts.push({ from, to: calls.length, endNs, cut: false });

    let done = 0;
    for (let b = 0; b < bursts.length; b++) {
      const burst = bursts[b]!;
      const final =
        nowNs === undefined
          ? force && b < bursts.length - 1
          : force || burst.endNs + this.gapNs + this.latenessNs <= nowNs;
      if (!final) break;
      this.emitBurst(t, calls, burst.from, burst.to, burst.endNs, burst.cut);
      done = burst.to;
    }
    if (done === calls.length) this.threads.delete(key);
    else if (done > 0) t.calls = calls.slice(done);
  }

  private emitBurst(
    t: Thread,
    calls: Call[],
    from: number,
    to: number,
    endNs: bigint,
    cut: boolean,
  ): void {
    let syscallNs = 0;
    let maxCallNs = 0;
    let errors = 0;
    for (let i = from; i < to; i++) {
      const c = calls[i]!;
      syscallNs += c.durationNs;
      if (c.durationNs > maxCallNs) maxCallNs = c.durationNs;
      if (c.error) errors++;
    }
    const startNs = calls[from]!.startNs;
    this.emit({
      kind: 'fsync-operation',
      source: t.source,
      startNs,
      durationNs: Number(endNs - startNs),
      count: to - from,
      syscallNs,
      maxCallNs,
      errors,
      directory: t.directory,
      pid: t.pid,
      tid: t.tid,
      comm: t.comm,
      gapMs: this.options.gapMs,
      cut,
      error: errors === to - from ? 'every call failed' : undefined,
    });
  }
}

/** Epoch ns now, for `flush`. */
export const nowEpochNs = (): bigint => BigInt(Date.now()) * MS;
