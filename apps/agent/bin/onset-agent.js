#!/usr/bin/env node
// `onset-agent`: runs the agent built to plain JavaScript (dist/onset-agent.mjs, see
// scripts/build.mjs). npm install builds it (the package's `prepare`); this launcher also
// rebuilds it, in a child process, whenever a source file is newer than the build, so a fresh
// clone or an edited checkout never runs stale code. If it cannot be built (esbuild missing,
// read-only directory), the TypeScript sources run through tsx instead, as before.
// One process (no `node --import tsx` child), so signals reach the agent directly and its
// clean shutdown still flushes spans.
import { execFileSync } from 'node:child_process';
import v8 from 'node:v8';
import { isFresh, OUT } from '../scripts/build.mjs';

// The young generation grows to 2 x 16 MiB semi-spaces under a steady stream of short-lived
// objects (one per traced event); at a few thousand events per second a small one costs no
// measurable CPU and ~20-30 MB less resident memory. (Flags on the command line win.)
if (!process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}

let built = isFresh();
if (!built) {
  try {
    execFileSync(process.execPath, [new URL('../scripts/build.mjs', import.meta.url).pathname], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    built = true;
  } catch {
    process.stderr.write(
      'onset-agent: could not build dist/; running the TypeScript sources through tsx\n',
    );
  }
}
if (built) {
  await import(OUT);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
