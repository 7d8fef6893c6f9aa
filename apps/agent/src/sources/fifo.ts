/**
 * Reading a tracer's output through a named pipe (FIFO) drained by a worker
 * thread.
 *
 * Why not the child's stdout pipe on the main thread: bpftrace's event
 * buffers (flush.bt) must be printed within ~100 ms or events are lost, and
 * the agent's main thread can be busy for longer (encoding an export batch,
 * garbage collection, a probe). A pipe holds only 64 KiB, so a busy reader
 * blocks bpftrace's write. The worker sits in a blocking read, so it drains
 * the pipe whatever the main thread is doing, and hands over lines in
 * batches. (For strace, which prints a line per syscall, batches are also
 * much cheaper than one stream event per line.) It ends at end-of-file, when
 * the tracer exits.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

// Plain CommonJS so it runs without the TypeScript loader.
const DRAIN_LOOP = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync } = require('node:fs');
const fd = openSync(workerData.path, 'r'); // blocks until a writer opens the pipe
const buf = Buffer.allocUnsafe(1 << 20);
let rest = '';
for (;;) {
  const n = readSync(fd, buf, 0, buf.length, null); // blocks until data; 0 once every writer closed
  if (n === 0) break;
  const lines = (rest + buf.toString('utf8', 0, n)).split('\\n');
  rest = lines.pop();
  if (lines.length) parentPort.postMessage(lines);
}
if (rest) parentPort.postMessage([rest]);
`;

export class FifoLineReader {
  readonly path: string;
  private readonly dir: string;
  /** A read end held open (never read) so writers can open the pipe without waiting for the worker. */
  private readonly holdFd: number;
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  private closing?: Promise<void>;

  constructor(name: string, onLine: (line: string) => void) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), `onset-agent-${name}-`));
    this.path = path.join(this.dir, `${name}.fifo`);
    execFileSync('mkfifo', ['-m', '600', this.path]); // Node has no mkfifo(3)
    this.holdFd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK);
    this.worker = new Worker(DRAIN_LOOP, { eval: true, workerData: { path: this.path } });
    this.worker.on('message', (lines: string[]) => {
      for (const line of lines) if (line) onLine(line);
    });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** A (blocking) write end for a tracer's stdout; close the agent's copy once the child has it. */
  openWriter(): number {
    return openSync(this.path, constants.O_WRONLY);
  }

  /** Read what is left (call after the tracer exited), then remove the pipe. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // If the tracer never opened the pipe, the worker still waits in open(): let it through to end-of-file.
      try {
        closeSync(openSync(this.path, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        /* the worker is done already */
      }
      await this.exited;
      closeSync(this.holdFd);
      rmSync(this.dir, { recursive: true, force: true });
    })();
    return this.closing;
  }
}
