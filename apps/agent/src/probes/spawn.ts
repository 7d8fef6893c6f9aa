/**
 * Spawn probe: time fork+exec of /bin/true from the agent, once as it is and
 * once with many extra fds open. Node's spawn() returns only after the child
 * has exec'd (libuv waits on a close-on-exec pipe), so the synchronous call
 * covers fork + exec. Node opens every fd close-on-exec, so the extra fds
 * make the kernel copy a large fd table at fork and close each fd at exec:
 * the fd-closing cost behind incident 1, visible as its own series.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import type { EventSink, SpawnEvent } from '../events.ts';
import { monotonicToEpochNs } from '../host/clock.ts';
import { countOpenFds, rssBytes } from '../host/proc.ts';
import { breathe, type Availability, type Probe } from './probe.ts';

export interface SpawnProbeOptions {
  truePath: string | undefined;
  count: number;
  extraFds: number;
}

/** Soft RLIMIT_NOFILE of this process (Node has no getrlimit). */
function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft) || 1024;
  } catch {
    return 1024;
  }
}

async function timedSpawn(
  path: string,
): Promise<{ startNs: bigint; durationNs: number; pid?: number; error?: string }> {
  const t0 = process.hrtime.bigint();
  const child = spawn(path, [], { stdio: 'ignore' });
  const t1 = process.hrtime.bigint();
  const error = await new Promise<string | undefined>((resolve) => {
    child.once('error', (e) => resolve(e.message));
    child.once('exit', () => resolve(undefined));
  });
  return { startNs: monotonicToEpochNs(t0), durationNs: Number(t1 - t0), pid: child.pid, error };
}

export class SpawnProbe implements Probe {
  readonly name = 'spawn';

  constructor(private readonly opts: SpawnProbeOptions) {}

  private extraFdsPossible(): number {
    const open = countOpenFds(process.pid) ?? 64;
    return Math.max(0, Math.min(this.opts.extraFds, openFileLimit() - open - 256));
  }

  check(): Availability {
    if (!this.opts.truePath) return { ok: false, reason: '`true` not found on PATH' };
    const extra = this.extraFdsPossible();
    const fdNote =
      extra < this.opts.extraFds ? ` (open-file limit allows only ${extra} extra fds)` : '';
    return {
      ok: true,
      detail: `spawn ${this.opts.truePath} ×${this.opts.count}, also with ${extra} extra fds open${fdNote}`,
    };
  }

  async run(emit: EventSink): Promise<void> {
    const exe = this.opts.truePath!;
    await this.round(emit, exe, undefined);
    const extra = this.extraFdsPossible();
    if (extra === 0) return;
    const fds: number[] = [];
    try {
      for (let i = 0; i < extra; i++) fds.push(openSync('/dev/null', 'r'));
      await this.round(emit, exe, `true (${extra} extra fds)`);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  }

  private async round(emit: EventSink, exe: string, label: string | undefined): Promise<void> {
    const fdCount = countOpenFds(process.pid);
    const rss = rssBytes(process.pid);
    for (let i = 0; i < this.opts.count; i++) {
      const r = await timedSpawn(exe);
      const event: SpawnEvent = {
        kind: 'spawn',
        source: 'probe',
        probe: label ? 'spawn-fds' : 'spawn',
        label,
        startNs: r.startNs,
        durationNs: r.durationNs,
        executable: exe,
        // libuv forks (clone without CLONE_VM) on Linux.
        method: 'fork',
        sharedMemory: false,
        pid: r.pid,
        parentPid: process.pid,
        parentComm: 'onset-agent',
        parentFdCount: fdCount,
        parentRssBytes: rss,
        error: r.error,
      };
      emit(event);
      await breathe();
    }
  }
}
