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
import {
  isTraced,
  type FsyncCall,
  type FsyncEvent,
  type FsyncOperationEvent,
  type FsyncRateEvent,
  type SourceName,
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
  key: string;
  source: SourceName;
  pid?: number;
  tid: number;
  comm?: string;
  directory?: string;
  /** Calls not yet emitted, in start order once `unsorted` is false. */
  calls: Call[];
  /** A call arrived that started before the previous one: sort and split again. */
  unsorted: boolean;
  /** Bursts already closed (by idle time or the cut) among `calls`, oldest first. */
  closed: Burst[];
  /** The burst still open: its first call, and its end so far; calls before `scanned` are split. */
  openFrom: number;
  openEndNs: bigint;
  scanned: number;
  /** The rate window this thread's last call counted in. */
  window?: Window;
}

interface Burst {
  from: number;
  to: number;
  endNs: bigint;
  cut: boolean;
}

interface Window {
  key: string;
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
  /** tid -> its last thread record (see add). */
  private readonly lastOfThread = new Map<number, Thread>();
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
    return isTraced(e) && GROUPED.has(e.call) && (e.tid ?? e.pid) !== undefined;
  }

  add(e: FsyncEvent): void {
    if (!FsyncOperations.accepts(e)) return;
    const tid = e.tid ?? e.pid!;
    // Hot path: a thread usually syncs one directory; its last record saves building the key.
    let t = this.lastOfThread.get(tid);
    let key = t?.key ?? '';
    if (!t || t.pid !== e.pid || t.directory !== e.directory) {
      key = `${e.pid ?? ''}:${tid}:${e.directory ?? ''}`;
      t = this.threads.get(key);
    }
    if (!t) {
      t = {
        key,
        source: e.source,
        pid: e.pid,
        tid,
        comm: e.comm,
        directory: e.directory,
        calls: [],
        unsorted: false,
        closed: [],
        openFrom: 0,
        openEndNs: 0n,
        scanned: 0,
      };
      this.threads.set(key, t);
    }
    this.lastOfThread.set(tid, t);
    t.comm = e.comm ?? t.comm;
    const endNs = e.startNs + BigInt(Math.round(e.durationNs));
    const last = t.calls[t.calls.length - 1];
    if (last && e.startNs < last.startNs) t.unsorted = true;
    t.calls.push({
      startNs: e.startNs,
      endNs,
      durationNs: e.durationNs,
      error: e.error !== undefined,
    });
    if (t.calls.length > MAX_CALLS_PER_THREAD) this.flushThread(t, undefined, true);

    const comm = this.seriesComm(e.comm ?? `pid ${e.pid}`);
    const index = e.startNs / this.windowNs;
    let w = t.window;
    if (!w || w.index !== index || w.comm !== comm || !this.windows.has(w.key)) {
      const wkey = `${index}:${comm}`;
      w = this.windows.get(wkey);
      if (!w) {
        w = { key: wkey, source: e.source, index, comm, calls: 0, syscallNs: 0, pids: new Set() };
        this.windows.set(wkey, w);
      }
      t.window = w;
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
    for (const t of this.threads.values()) this.flushThread(t, nowNs, all);
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

  private readonly comms = new Map<string, string>();
  /** The folded process name (cached: this runs per traced call). */
  private seriesComm(comm: string): string {
    let out = this.comms.get(comm);
    if (out === undefined) {
      if (this.comms.size >= 10_000) this.comms.clear();
      this.comms.set(comm, (out = normalizeComponent(comm)));
    }
    return out;
  }

  /** Calls and windows held (for tests and the log). */
  get held(): { calls: number; windows: number } {
    let calls = 0;
    for (const t of this.threads.values()) calls += t.calls.length;
    return { calls, windows: this.windows.size };
  }

  /**
   * Split a thread's calls into bursts and emit the finished ones. With `nowNs` undefined and
   * `force`, every closed burst is emitted (the thread holds too many calls). Splitting is
   * incremental: calls arrive nearly in order, so each flush only looks at the new ones, unless
   * one arrived out of order.
   */
  private drop(t: Thread): void {
    this.threads.delete(t.key);
    if (this.lastOfThread.get(t.tid) === t) this.lastOfThread.delete(t.tid);
  }

  private flushThread(t: Thread, nowNs: bigint | undefined, force: boolean): void {
    const calls = t.calls;
    if (calls.length === 0) {
      this.drop(t);
      return;
    }
    if (t.unsorted || t.scanned === 0) {
      calls.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
      t.unsorted = false;
      t.closed = [];
      t.openFrom = 0;
      t.openEndNs = calls[0]!.endNs;
      t.scanned = 1;
    }
    for (let i = t.scanned; i < calls.length; i++) {
      const c = calls[i]!;
      const idle = c.startNs - t.openEndNs > this.gapNs;
      const tooLong = c.startNs - calls[t.openFrom]!.startNs >= this.maxBurstNs;
      if (idle || tooLong) {
        t.closed.push({ from: t.openFrom, to: i, endNs: t.openEndNs, cut: !idle });
        t.openFrom = i;
        t.openEndNs = c.endNs;
      } else if (c.endNs > t.openEndNs) t.openEndNs = c.endNs;
    }
    t.scanned = calls.length;

    const isFinal = (endNs: bigint) =>
      nowNs === undefined ? force : force || endNs + this.gapNs + this.latenessNs <= nowNs;
    let done = 0;
    let emitted = 0;
    for (const burst of t.closed) {
      if (!isFinal(burst.endNs)) break;
      this.emitBurst(t, calls, burst.from, burst.to, burst.endNs, burst.cut);
      done = burst.to;
      emitted++;
    }
    if (emitted === t.closed.length && nowNs !== undefined && isFinal(t.openEndNs)) {
      this.emitBurst(t, calls, t.openFrom, calls.length, t.openEndNs, false);
      this.drop(t);
      return;
    }
    if (done > 0) {
      t.calls = calls.slice(done);
      t.closed = t.closed
        .slice(emitted)
        .map((b) => ({ ...b, from: b.from - done, to: b.to - done }));
      t.openFrom -= done;
      t.scanned -= done;
    }
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
