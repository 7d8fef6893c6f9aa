#!/usr/bin/env node
/**
 * Builds the agent into one plain-JavaScript file, dist/onset-agent.mjs (esbuild: TypeScript
 * stripped, the agent and its dependencies bundled), plus its bpftrace programs in
 * dist/programs. The `onset-agent` command runs that file, so the agent needs no TypeScript
 * loader at run time (tsx cost ~37 MB of memory and most of the start-up CPU) and loads one
 * file instead of a few hundred modules.
 *
 *   node apps/agent/scripts/build.mjs          build (npm install runs this as `prepare`)
 *   node apps/agent/scripts/build.mjs --check  exit 1 when dist is missing or older than src
 *
 * bin/onset-agent.js checks freshness at every start and rebuilds when a source changed, so a
 * fresh clone, a `git pull` or an edit never runs stale code. Writes go to temporary names
 * and are renamed into place, so concurrent builds (tests start several agents) are safe.
 */
import { copyFileSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const AGENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SRC = path.join(AGENT, 'src');
export const DIST = path.join(AGENT, 'dist');
export const OUT = path.join(DIST, 'onset-agent.mjs');
const PROGRAMS = path.join(SRC, 'sources/bpftrace/programs');

/** Newest modification time (ms) of the sources the build reads. */
export function newestSource() {
  let newest = statSync(path.join(AGENT, 'package.json')).mtimeMs;
  newest = Math.max(newest, statSync(fileURLToPath(import.meta.url)).mtimeMs);
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(SRC);
  // Workspace packages bundled in (path folding lives in @onset/core, attribute names in @onset/contract).
  for (const pkg of ['core', 'contract']) walk(path.join(AGENT, '../../packages', pkg, 'src'));
  return newest;
}

/** True when dist/onset-agent.mjs exists and is newer than every source file. */
export function isFresh() {
  try {
    return statSync(OUT).mtimeMs >= newestSource();
  } catch {
    return false;
  }
}

export async function build() {
  const started = newestSource();
  const { build: esbuild } = await import('esbuild');
  const result = await esbuild({
    entryPoints: [path.join(SRC, 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    outfile: OUT,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    // Bundled CommonJS dependencies (OpenTelemetry, protobufjs) call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __onsetCreateRequire } from 'node:module'; const require = __onsetCreateRequire(import.meta.url);",
    },
  });
  mkdirSync(path.join(DIST, 'programs'), { recursive: true });
  const tmp = `.tmp-${process.pid}`;
  for (const f of readdirSync(PROGRAMS)) {
    copyFileSync(path.join(PROGRAMS, f), path.join(DIST, 'programs', f + tmp));
    renameSync(path.join(DIST, 'programs', f + tmp), path.join(DIST, 'programs', f));
  }
  // The bundle last: its time stamp is what says "fresh". Sources changed during the build make it stale again.
  for (const file of [...result.outputFiles].sort((a) => (a.path === OUT ? 1 : -1))) {
    writeFileSync(file.path + tmp, file.contents);
    renameSync(file.path + tmp, file.path);
  }
  if (newestSource() > started) return build();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) process.exit(isFresh() ? 0 : 1);
  build().catch((e) => {
    process.stderr.write(`onset-agent build failed: ${e?.message ?? e}\n`);
    process.exit(1);
  });
}
