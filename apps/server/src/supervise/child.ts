/**
 * One supervised child process: started in its own process group (so a
 * terminal's Ctrl-C reaches only the supervisor, which stops children in
 * order), restarted with backoff when it dies unexpectedly, and stopped with
 * a signal, then SIGKILL to its whole group after a grace period.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Called on every (re)start, e.g. to wait for its IPC "ready". */
  onStart?: (child: ChildProcess) => void;
}

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** A child up this long is healthy again: its next crash restarts after the minimum delay. */
const HEALTHY_AFTER_MS = 60_000;

export class SupervisedChild {
  private child: ChildProcess | undefined;
  private stopping = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;

  constructor(
    private spec: ChildSpec,
    private readonly log: (line: string) => void,
  ) {}

  /** Set a variable for the next (re)starts. */
  setEnv(name: string, value: string): void {
    this.spec.env = { ...(this.spec.env ?? process.env), [name]: value };
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): ChildProcess {
    const opts: SpawnOptions = {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: this.spec.env ?? process.env,
      detached: true, // own process group: it and its own children are signalled together
    };
    const child = spawn(this.spec.command, this.spec.args, opts);
    this.child = child;
    this.startedAt = Date.now();
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    child.on('error', (err) => this.log(`${this.spec.name}: ${err.message}`));
    this.spec.onStart?.(child);
    return child;
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    // Anything it left behind in its group (a tracer, a worker) goes with it.
    killGroup(child.pid, 'SIGKILL');
    if (this.stopping) return;
    if (Date.now() - this.startedAt > HEALTHY_AFTER_MS) this.failures = 0;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.failures++);
    this.log(
      `${this.spec.name} exited unexpectedly (${signal ?? `code ${code}`}); restarting in ${(delay / 1000).toFixed(0)} s`,
    );
    this.timer = setTimeout(() => {
      if (!this.stopping) this.start();
    }, delay);
  }

  /** Signal it, wait up to graceMs for it to exit, then SIGKILL its group. Resolves once it is gone. */
  async stop(
    signal: NodeJS.Signals,
    graceMs: number,
  ): Promise<'exited' | 'killed' | 'not running'> {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return 'not running';
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      gone.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    killGroup(child.pid, 'SIGKILL');
    if (!inTime) await gone;
    return inTime ? 'exited' : 'killed';
  }
}

export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is empty */
  }
}
