/**
 * The strace fallback: attach to the target processes (and their children,
 * -f) and turn the fsync/unmount/fork/exec calls strace prints into events.
 * strace stops the traced process at every syscall, so it is slower than
 * bpftrace and inflates what it measures; it is the fallback for hosts where
 * bpftrace cannot run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { EventSink } from '../../events.ts';
import type { DirtySampler } from '../../host/dirty-sampler.ts';
import type { MountTable } from '../../host/mounts.ts';
import type { Logger } from '../../log.ts';
import { FifoLineReader } from '../fifo.ts';
import { onLines, stopChild } from '../lines.ts';
import type { TracingSource } from '../source.ts';
import { StraceCorrelator, type ProcessProbe } from './correlate.ts';
import { StraceParser } from './parse.ts';

// '?' lets strace skip names this architecture lacks (arm64 has no fork/vfork/umount).
const SYSCALLS =
  'fsync,fdatasync,syncfs,?umount,umount2,mount,?fsopen,?move_mount,?fork,?vfork,clone,clone3,execve,execveat';

export interface StraceSourceOptions {
  stracePath: string;
  /** The pids to attach to now (re-evaluated periodically to pick up new matching processes). */
  targets: () => number[];
  sink: EventSink;
  log: Logger;
  mounts: MountTable;
  dirty: DirtySampler;
  proc: ProcessProbe;
  rescanMs?: number;
}

/**
 * The trace goes to `output` (a FIFO, see fifo.ts), apart from strace's own
 * messages on stderr. -q: no "Process N attached" message for every new
 * child; readiness is read from /proc/<pid>/status (TracerPid) instead.
 */
function straceArgs(pids: number[], output: string): string[] {
  return [
    '-f',
    '-q',
    '-ttt',
    '-T',
    '-y',
    '-s',
    '256',
    '-e',
    'signal=none',
    '-e',
    `trace=${SYSCALLS}`,
    '-o',
    output,
    ...pids.flatMap((p) => ['-p', String(p)]),
  ];
}

function tracerOf(pid: number): number | undefined {
  try {
    return Number(/^TracerPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return undefined; // gone
  }
}

export class StraceSource implements TracingSource {
  readonly name = 'strace' as const;
  private child?: ChildProcess;
  private output?: FifoLineReader;
  private pids: number[] = [];
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;
  private readonly correlator: StraceCorrelator;

  constructor(private readonly opts: StraceSourceOptions) {
    this.correlator = new StraceCorrelator({
      sink: opts.sink,
      mounts: opts.mounts,
      proc: opts.proc,
      dirtyAt: (ms) => opts.dirty.at(ms),
    });
  }

  describe(): string {
    return `strace attached to pid ${this.pids.join(', ')} and their children`;
  }

  async start(): Promise<void> {
    const pids = this.opts.targets();
    if (pids.length === 0)
      throw new Error('no processes to attach to (give --pid, --comm or --cgroup)');
    await this.launch(pids);
    this.opts.dirty.start();
    this.timers.push(
      setInterval(() => {
        this.correlator.expire();
        // Keep the mount tables fresh: strace reports an unmount after the mount is gone.
        for (const pid of this.pids) this.opts.mounts.refresh(pid);
      }, 2_000),
      setInterval(() => void this.rescan(), this.opts.rescanMs ?? 30_000),
    );
    for (const t of this.timers) t.unref();
  }

  private async rescan(): Promise<void> {
    const now = this.opts.targets();
    const fresh = now.filter((p) => !this.pids.includes(p));
    if (fresh.length === 0 || this.stopping) return;
    this.opts.log.info(`strace: new matching processes ${fresh.join(', ')}; re-attaching`);
    const old = this.child;
    this.child = undefined;
    if (old) await stopChild(old, 'SIGINT', 3_000);
    await this.output?.close();
    await this.launch(now).catch((e) =>
      this.opts.log.error(`strace: re-attach failed: ${(e as Error).message}`),
    );
  }

  private launch(pids: number[]): Promise<void> {
    this.pids = pids;
    const parser = new StraceParser(pids[0]!);
    let handle: (text: string) => void = () => {};
    const output = new FifoLineReader('strace', (text) => handle(text));
    const child = spawn(this.opts.stracePath, straceArgs(pids, output.path), {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    this.output = output;
    const messages: string[] = [];
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearInterval(timer);
        if (err) reject(err);
        else resolve();
      };
      const began = Date.now();
      // Attached once every target that is still alive names strace as its tracer.
      const timer = setInterval(() => {
        const tracers = pids.map(tracerOf).filter((t) => t !== undefined);
        const attached = tracers.filter((t) => t === child.pid).length;
        if (tracers.length > 0 && attached === tracers.length) settle();
        else if (Date.now() - began > 5_000) {
          if (attached > 0) settle();
          else
            settle(new Error(`strace attached to nothing: ${messages.join('; ') || 'no output'}`));
        }
      }, 50);
      handle = (text: string) => {
        const line = parser.line(text);
        switch (line.type) {
          case 'call':
            this.correlator.handle(line.call);
            break;
          case 'exit':
            this.correlator.exited(line.pid);
            break;
          case 'message':
            messages.push(line.text);
            if (settled) this.opts.log.warn(`strace: ${line.text}`);
            break;
        }
      };
      onLines(child.stderr!, handle);
      child.on('error', (e) =>
        settle(new Error(`cannot run ${this.opts.stracePath}: ${e.message}`)),
      );
      child.on('exit', (code, signal) => {
        void output.close();
        if (!settled)
          settle(
            new Error(`strace exited (${signal ?? code}): ${messages.join('; ') || 'no output'}`),
          );
        else if (!this.stopping && this.child === child)
          this.opts.log.warn(
            `strace exited (${signal ?? code}); the traced processes are gone or detached`,
          );
      });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.opts.dirty.stop();
    // SIGINT makes strace detach cleanly, leaving the traced processes running.
    if (this.child) await stopChild(this.child, 'SIGINT', 3_000);
    await this.output?.close();
  }
}
