/**
 * Workloads are built at test time: C with the machine's gcc, TypeScript into
 * one plain-JavaScript file with esbuild.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { build } from 'esbuild';
import { WORKLOADS } from './harness.ts';

/** Compile a workload's C source with gcc into `dir`; returns the binary's path. */
export function compile(source: string, dir: string, name: string): string {
  const out = path.join(dir, name);
  execFileSync('gcc', ['-O2', '-Wall', '-o', out, path.join(WORKLOADS, source)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out;
}

/**
 * Bundle a workload's TypeScript (and its dependencies) into `dir`; returns the script's path,
 * run with plain `node`. Not `node --import tsx`: tsx's module hooks run on a thread of their
 * own, and at the workloads' real-time priority that thread was seen spinning a core for
 * minutes (two Node workloads took both cores and every other workload's latency stepped).
 */
export async function bundle(source: string, dir: string, name: string): Promise<string> {
  const out = path.join(dir, `${name}.cjs`);
  await build({
    entryPoints: [path.join(WORKLOADS, source)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    logLevel: 'warning',
  });
  return out;
}
