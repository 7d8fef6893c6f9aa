/**
 * npm run bench:detect:ab [-- --base main --series 100 --rounds 5]
 *
 * CPU per point of the pure detector, this checkout against another git ref,
 * in one process with the rounds interleaved (the machine is shared: only
 * the ratio of an interleaved run means anything). The base's
 * packages/core/src/detect/ is extracted with `git archive` into
 * node_modules/.cache/onset-detect-ab/<commit>/ and imported from there;
 * this checkout's is copied beside it (checkout/) and imported the same way.
 * One uncounted warm-up pass of each first. Sets: the eval:detect generator (seed 3), the TCPD development series
 * (×20) and the real recording (apps/server/test/fixtures/recordings).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { MinutePoint } from '@onset/core';
import type { detectSteps as detectHere } from '../../packages/core/src/detect/api.ts';
import { generateCorpus } from '../eval-detect/synth.ts';
import { loadTcpd, tcpdDir, toMinutePoints } from '../eval-realdata/tcpd.ts';
import { minutePoints, readRecording } from '../realdata/recording.ts';
import { ROOT } from '../lib/harness.ts';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string', default: 'main' },
    series: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
  },
});
const commit = execFileSync('git', ['rev-parse', args.base!], { cwd: ROOT }).toString().trim();
const dir = path.join(ROOT, 'node_modules/.cache/onset-detect-ab', commit);
if (!existsSync(path.join(dir, 'packages/core/src/detect/api.ts'))) {
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['archive', commit, 'packages/core/src/detect'], { cwd: ROOT });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
}
const base = (await import(
  pathToFileURL(path.join(dir, 'packages/core/src/detect/api.ts')).href
)) as { detectSteps: typeof detectHere };
// This checkout's detect/ is copied beside it and imported the same way: modules loaded from
// different places were measured 0.7-0.85x apart with the same code.
const hereDir = path.join(ROOT, 'node_modules/.cache/onset-detect-ab/checkout');
rmSync(hereDir, { recursive: true, force: true });
mkdirSync(path.join(hereDir, 'packages/core/src'), { recursive: true });
cpSync(
  path.join(ROOT, 'packages/core/src/detect'),
  path.join(hereDir, 'packages/core/src/detect'),
  { recursive: true },
);
const here = (await import(
  pathToFileURL(path.join(hereDir, 'packages/core/src/detect/api.ts')).href
)) as { detectSteps: typeof detectHere };

type Set = { name: string; series: Array<{ points: MinutePoint[]; floor: number }> };
const tcpd = (await loadTcpd(tcpdDir(ROOT))).map((s) => toMinutePoints(s.values));
const recording = path.join(
  ROOT,
  'apps/server/test/fixtures/recordings/2026-12-01-shared-vm.json.gz',
);
const sets: Set[] = [
  {
    name: 'eval:detect generator',
    series: generateCorpus({ series: Number(args.series), minutes: 2880, seed: 3 }).map((s) => ({
      points: s.points,
      floor: s.floor,
    })),
  },
  {
    name: 'TCPD dev ×20',
    series: Array.from({ length: 20 }, () => tcpd.map((p) => ({ points: p, floor: 0 }))).flat(),
  },
  {
    name: 'recording',
    series: (await readRecording(recording)).series.map((s) => ({
      points: minutePoints(s),
      floor: 0,
    })),
  },
];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const rounds = Number(args.rounds);
console.log(
  `base ${args.base} (${commit.slice(0, 10)}) vs this checkout, ${rounds} interleaved rounds`,
);
for (const set of sets) {
  const points = set.series.reduce((a, s) => a + s.points.length, 0);
  const ms = { base: 0, here: 0 };
  // One warm-up pass of each (JIT), not counted.
  for (const detect of [base.detectSteps, here.detectSteps])
    for (const s of set.series) detect(s.points, { floor: s.floor, minRatio: 1.2 });
  for (let r = 0; r < rounds; r++)
    for (const which of r % 2 ? (['here', 'base'] as const) : (['base', 'here'] as const)) {
      const detect = which === 'base' ? base.detectSteps : here.detectSteps;
      const c0 = cpuMs();
      for (const s of set.series) detect(s.points, { floor: s.floor, minRatio: 1.2 });
      ms[which] += cpuMs() - c0;
    }
  const ns = (t: number) => ((t / rounds / points) * 1e6).toFixed(0);
  console.log(
    `${set.name}: ${points} points: base ${ns(ms.base)} ns/point, here ${ns(ms.here)} ns/point, here/base ${(ms.here / ms.base).toFixed(3)}`,
  );
}
