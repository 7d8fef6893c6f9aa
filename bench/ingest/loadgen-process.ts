/**
 * The load generator (loadgen.ts) as a child process, so its CPU is not the server's: `warm`
 * settles when its warm-up is over (measure from there), `done` with its result line.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../lib/harness.ts';

export interface LoadgenOptions {
  seconds: number;
  concurrency: number;
  batch: number;
  load: string;
  warmup: number;
}

/** The result line loadgen.ts prints last. */
export interface LoadgenResult {
  spans: number;
  acknowledged: number;
  failedRequests: number;
  seconds: number;
  latencies: number[];
}

export function startLoadgen(
  otlpUrl: string,
  o: LoadgenOptions,
): { warm: Promise<void>; done: Promise<LoadgenResult> } {
  const gen = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'bench/ingest/loadgen.ts'),
      otlpUrl,
      String(o.seconds),
      String(o.concurrency),
      String(o.batch),
      o.load,
      String(o.warmup),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  let onWarm = () => {};
  const warmed = new Promise<void>((r) => (onWarm = r));
  gen.stdout.on('data', (d) => {
    out += d;
    if (out.startsWith('warm\n')) onWarm();
  });
  const exited = new Promise<void>((r) => gen.once('exit', () => r()));
  return {
    // A generator that dies in its warm-up ends the wait too; `done` then says why.
    warm: Promise.race([warmed, exited]),
    done: exited.then(() => {
      const last = out.trim().split('\n').at(-1);
      if (!last || last === 'warm')
        throw new Error(`loadgen printed no result: ${out.slice(-300)}`);
      return JSON.parse(last) as LoadgenResult;
    }),
  };
}
