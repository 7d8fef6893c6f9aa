/**
 * The eBPF source: runs bpftrace with the programs in ./programs and decodes
 * its JSON output (`-f json`, one object per line), read through a FIFO
 * (see fifo.ts for why not a plain stdout pipe).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pageOutMappings } from '../../host/pageout.ts';
import type { Logger } from '../../log.ts';
import { FifoLineReader } from '../fifo.ts';
import { onLines, stopChild } from '../lines.ts';
import type { TracingSource } from '../source.ts';
import type { BpftraceDecoder } from './decode.ts';
import type { BpftraceProgram } from './program.ts';

export interface BpftraceSourceOptions {
  bpftracePath: string;
  program: BpftraceProgram;
  decoder: BpftraceDecoder;
  log: Logger;
  /** What is traced, for the log. */
  scope: string;
  env?: NodeJS.ProcessEnv;
}

// Noise bpftrace prints on every start on recent kernels; not worth a user's attention.
const BENIGN_STDERR = [
  /couldn't set RLIMIT_MEMLOCK/,
  /WARNING: Addrspace mismatch/,
  /^\s*if \(\$1 > 0/,
  /^\s*~+\s*$/,
];

/** Longest wait, after bpftrace names its probes, for its last probe's first tick (flush.bt). */
const ATTACH_WAIT_MS = 10_000;

export class BpftraceSource implements TracingSource {
  readonly name = 'bpftrace' as const;
  private child?: ChildProcess;
  private dir?: string;
  private output?: FifoLineReader;
  private stopping = false;
  /** Events the kernel could not hand to bpftrace because its buffer was full. */
  lostEvents = 0;
  attachedProbes = 0;
  startupMs = 0;
  private attachTimer?: NodeJS.Timeout;

  constructor(private readonly opts: BpftraceSourceOptions) {}

  describe(): string {
    return `bpftrace (${this.attachedProbes} probes: spawn, fsync, unmount) tracing ${this.opts.scope}`;
  }

  private began = 0;

  start(): Promise<void> {
    this.began = Date.now();
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'onset-agent-bpftrace-'));
    const file = path.join(this.dir, 'onset-agent.bt');
    writeFileSync(file, this.opts.program.text);
    let settle: (err?: Error) => void = () => {};
    const output = new FifoLineReader('bpftrace', (line) => this.line(line, settle));
    this.output = output;
    const writer = output.openWriter();
    const child = spawn(this.opts.bpftracePath, ['-f', 'json', file, ...this.opts.program.params], {
      stdio: ['ignore', writer, 'pipe'],
      env: {
        ...(this.opts.env ?? process.env),
        // Room for long exec paths; event buffers (flush.bt) for 8192 events per 100 ms.
        BPFTRACE_STRLEN: '128',
        BPFTRACE_MAP_KEYS_MAX: '8192',
        // One malloc arena: LLVM's compile-time heap is otherwise spread over several and
        // ~8 MB more of it stays resident after compiling.
        GLIBC_TUNABLES: 'glibc.malloc.arena_max=1',
      },
    });
    closeSync(writer); // bpftrace holds its own copy; EOF comes when it exits
    this.child = child;
    const stderr: string[] = [];
    const attached = new Promise<void>((resolve, reject) => {
      let settled = false;
      settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve();
      };
      onLines(child.stderr!, (line) => {
        if (BENIGN_STDERR.some((re) => re.test(line))) return;
        if (stderr.length < 50) stderr.push(line);
        if (settled) this.opts.log.warn(`bpftrace: ${line}`);
      });
      child.on('error', (e) =>
        settle(new Error(`cannot run ${this.opts.bpftracePath}: ${e.message}`)),
      );
      child.on('exit', (code, signal) => {
        void this.output?.close();
        this.cleanup();
        const why =
          stderr
            .filter((l) => /ERROR|error/.test(l))
            .slice(0, 3)
            .join(' | ') ||
          stderr.slice(-3).join(' | ') ||
          'no output';
        if (!settled)
          settle(
            new Error(`bpftrace exited (${signal ?? `code ${code}`}) before attaching: ${why}`),
          );
        else if (!this.stopping)
          this.opts.log.error(
            `bpftrace stopped unexpectedly (${signal ?? `code ${code}`}): ${why}`,
          );
      });
    });
    // Released before the source counts as started, so the agent's footprint once it says it is
    // running does not include the compiler.
    return attached.then(() => this.releaseCompiler(child.pid!));
  }

  /** Hand back the LLVM/clang pages bpftrace needed only to compile (see host/pageout.ts). */
  private async releaseCompiler(pid: number): Promise<void> {
    const r = await pageOutMappings(pid, String.raw`/lib(LLVM|clang)[-.]`);
    if (this.stopping) return;
    if (r.ok)
      this.opts.log.info(
        `bpftrace: compiled and attached; released ${((r.releasedBytes ?? 0) / 1048576).toFixed(0)} MB of LLVM/clang pages it no longer needs`,
      );
    else this.opts.log.debug(`bpftrace: could not release its compiler pages: ${r.reason}`);
  }

  private line(line: string, attached: () => void): void {
    let msg: { type?: string; data?: unknown };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.type === 'value' && Array.isArray(msg.data)) this.opts.decoder.handle(msg.data);
    else if (msg.type === 'map' && msg.data && typeof msg.data === 'object')
      this.opts.decoder.handleBuffers(msg.data as Record<string, unknown>);
    else if (msg.type === 'value' && msg.data === 'attached') {
      // flush.bt's last probe ticked: every probe is attached (see below).
      clearTimeout(this.attachTimer);
      this.startupMs = Date.now() - this.began;
      attached();
    } else if (msg.type === 'attached_probes') {
      // bpftrace 0.17 says this before it attaches the probes (0.24 s for 361 tracepoints on a
      // quiet machine, longer on a busy one): a mount in that window went unseen while its
      // unmount was traced. Started means the program's last probe has ticked, or, should it
      // never, ATTACH_WAIT_MS after this.
      this.attachedProbes = (msg.data as { probes?: number })?.probes ?? 0;
      this.attachTimer = setTimeout(() => {
        this.opts.log.warn(
          `bpftrace: its last probe did not tick within ${ATTACH_WAIT_MS / 1000} s of attaching; starting anyway`,
        );
        this.startupMs = Date.now() - this.began;
        attached();
      }, ATTACH_WAIT_MS);
      this.attachTimer.unref();
    } else if (msg.type === 'lost_events') {
      const n = (msg.data as { events?: number })?.events ?? 0;
      this.lostEvents += n;
      this.opts.log.warn(
        `bpftrace: the kernel dropped ${n} events (buffer full); narrow the filter if this repeats`,
      );
    }
  }

  private cleanup(): void {
    clearTimeout(this.attachTimer);
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child) await stopChild(this.child, 'SIGINT', 5_000);
    await this.output?.close();
    this.opts.decoder.flush();
    this.cleanup();
  }
}
