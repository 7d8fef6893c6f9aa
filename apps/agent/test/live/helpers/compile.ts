/** Workloads written in C are compiled at test time, with the machine's gcc. */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { WORKLOADS } from './harness.ts';

/** Compile a workload's C source with gcc into `dir`; returns the binary's path. */
export function compile(source: string, dir: string, name: string): string {
  const out = path.join(dir, name);
  execFileSync('gcc', ['-O2', '-Wall', '-o', out, path.join(WORKLOADS, source)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out;
}
