/**
 * npm run eval:detect [-- --series 600 --minutes 2880 --seed 1 --no-otava --no-cache]
 *
 * Generates labelled synthetic series (bench/eval-detect/synth.ts), runs the
 * Onset step detector and Apache Otava (Python, default settings, on the same
 * log values) over them, and prints precision, recall, F1 (±5 points), median
 * detection delay, location error and false alarms per 1,000 change-free
 * points for both, row by row. Results go to bench/results/eval-detect.json.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { detectOptionsFor, detectSteps, type DetectOptions } from '@onset/core';
import { writeResult } from '../lib/harness.ts';
import { scoreMethod, type Detection, type MethodRun, type Row, MARGIN, ASSOC } from './score.ts';
import { generateCorpus, type SynthSeries } from './synth.ts';
import { generateShapes } from './shapes.ts';
import { printShapes, scoreShapes, type ShapeRow } from './shapes-score.ts';
import { MINUTE_LATENESS_MS, sealDelayMs } from '@onset/server/internals';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const { values: args } = parseArgs({
  options: {
    series: { type: 'string', default: '600' },
    minutes: { type: 'string', default: '2880' },
    seed: { type: 'string', default: '1' },
    'no-otava': { type: 'boolean', default: false },
    'no-cache': { type: 'boolean', default: false },
    workers: { type: 'string' },
    quiet: { type: 'boolean', default: false },
    // Detector options as JSON, for experiments (e.g. --detect '{"alpha":1e-6}').
    detect: { type: 'string', default: '{}' },
    // Series per shape in the shapes corpus (shapes.ts); 0 skips it.
    shapes: { type: 'string', default: '60' },
  },
});

const detectOpts = JSON.parse(args.detect!) as DetectOptions;
const opts = {
  series: Number(args.series),
  minutes: Number(args.minutes),
  seed: Number(args.seed),
};
const log = (s: string) => {
  if (!args.quiet) process.stderr.write(s + '\n');
};

log(`generating ${opts.series} series × ${opts.minutes} minutes (seed ${opts.seed})…`);
let t = performance.now();
const corpus = generateCorpus(opts);
const totalPoints = corpus.reduce((a, s) => a + s.points.length, 0);
const totalChanges = corpus.reduce((a, s) => a + s.truth.length, 0);
log(
  `  ${totalPoints} points, ${totalChanges} labelled changes, ${corpus.filter((s) => !s.truth.length).length} controls (${((performance.now() - t) / 1000).toFixed(1)} s)`,
);

// ---- Onset ----
t = performance.now();
const onset: MethodRun = { name: 'onset', available: true, detections: new Map() };
for (const s of corpus) {
  const changes = detectSteps(s.points, { ...detectOpts, floor: s.floor });
  onset.detections.set(
    s.id,
    changes.map((c) => ({ index: c.index, detectedIndex: c.detectedIndex })),
  );
}
const onsetSeconds = (performance.now() - t) / 1000;
log(`onset: ${onsetSeconds.toFixed(2)} s`);

// ---- Otava ----
const otava = args['no-otava'] ? unavailable('skipped (--no-otava)') : await runOtava(corpus);

// ---- Score and print ----
const results = [onset, otava].map((run) => ({
  run,
  ...(run.available ? scoreMethod(corpus, run) : { rows: [] as Row[], outcomes: [] }),
}));
const table = printTable(
  results.map((r) => ({
    name: r.run.name,
    available: r.run.available,
    note: r.run.note,
    rows: r.rows,
  })),
);
process.stdout.write(table + '\n');
const bars = checkBars(results[0]!.rows, results[1]!.run.available ? results[1]!.rows : null);
process.stdout.write(bars.text + '\n');

// ---- Shapes seen in reality (bursts, ramps, moderate and tail steps, short series, time to open) ----
let shapeRows: ShapeRow[] = [];
const perKind = Number(args.shapes);
if (perKind > 0) {
  t = performance.now();
  const shapes = generateShapes({ perKind, seed: opts.seed });
  // As the server runs the detector on a latency view.
  const shapeOpts = { ...detectOptionsFor('latency'), ...detectOpts };
  const found = new Map(shapes.map((s) => [s.id, detectSteps(s.points, shapeOpts)]));
  const scored = scoreShapes(shapes, found, [
    { label: 'pass at :00, minutes fed 60 s late (before)', sealMs: sealDelayMs(0, 60_000) },
    {
      label: `pass ${MINUTE_LATENESS_MS / 1000} s past each minute (now)`,
      sealMs: sealDelayMs(MINUTE_LATENESS_MS, MINUTE_LATENESS_MS),
    },
  ]);
  shapeRows = scored.rows;
  log(`shapes: ${shapes.length} series (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  process.stdout.write(
    `\nShapes seen in reality (${perKind} series each, detector options as the server's latency view: ${JSON.stringify(shapeOpts)}):\n` +
      printShapes(shapeRows) +
      '\n',
  );
}

const file = await writeResult('eval-detect', {
  params: { ...opts, margin: MARGIN, assoc: ASSOC, points: totalPoints, changes: totalChanges },
  onsetSeconds,
  methods: results.map((r) => ({
    name: r.run.name,
    available: r.run.available,
    note: r.run.note ?? null,
    rows: r.rows,
  })),
  bars: bars.items,
  shapes: shapeRows,
});
log(`wrote ${path.relative(process.cwd(), file)}`);

// ---------------------------------------------------------------------------

function unavailable(note: string): MethodRun {
  return { name: 'otava', available: false, note, detections: new Map() };
}

function python(): string | null {
  for (const exe of [process.env.PYTHON, 'python3', 'python']) {
    if (!exe) continue;
    const r = spawnSync(exe, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return exe;
  }
  return null;
}

async function runOtava(corpus: SynthSeries[]): Promise<MethodRun> {
  const py = python();
  if (!py) return unavailable('no python3 found');
  const probe = () =>
    spawnSync(py, ['-c', 'import otava.analysis'], { encoding: 'utf8' }).status === 0;
  if (!probe()) {
    log(
      'otava: the Python package apache-otava is missing; installing it with pip (pip install apache-otava)…',
    );
    const r = spawnSync(py, ['-m', 'pip', 'install', '--quiet', 'apache-otava'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (r.status !== 0 || !probe()) {
      log(
        'otava: could not install apache-otava; its row is printed as unavailable. Install it by hand: pip install apache-otava',
      );
      return unavailable('apache-otava not installed (pip install apache-otava failed)');
    }
  }
  const version = spawnSync(
    py,
    ['-c', 'import importlib.metadata as m; print(m.version("apache-otava"))'],
    { encoding: 'utf8' },
  ).stdout.trim();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'onset-eval-otava-'));
  try {
    const input = path.join(dir, 'in.jsonl');
    const output = path.join(dir, 'out.jsonl');
    const lines = corpus.map((s) =>
      JSON.stringify({
        id: s.id,
        y50: s.points.map((p) => Math.log(Math.max(p.p50, 0) + s.floor)),
        y99: s.points.map((p) => Math.log(Math.max(p.p99, 0) + s.floor)),
        truth: s.truth.map((c) => c.index),
      }),
    );
    const body = lines.join('\n') + '\n';
    await writeFile(input, body);
    // Otava takes minutes; keep its answers for identical inputs (same corpus, runner and version).
    const key = createHash('sha256')
      .update(body)
      .update(await readFile(path.join(HERE, 'otava_runner.py')))
      .update(version)
      .digest('hex')
      .slice(0, 16);
    const cache = path.join(os.tmpdir(), `onset-eval-otava-${key}.jsonl`);
    if (!args['no-cache'] && (await stat(cache).catch(() => null))) {
      log(`otava ${version}: cached answers (${cache})`);
      return readOtava(cache, version, corpus);
    }
    log(`otava ${version}: running (defaults: window 50, p ≤ 0.001) on ${corpus.length} series…`);
    const t0 = performance.now();
    const workers = args.workers ?? String(Math.max(1, os.availableParallelism()));
    const r = spawnSync(py, [path.join(HERE, 'otava_runner.py'), input, output, workers], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (r.status !== 0) return unavailable(`otava runner failed (exit ${r.status})`);
    log(`otava: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await copyFile(output, cache);
    return readOtava(output, version, corpus);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readOtava(file: string, version: string, corpus: SynthSeries[]): Promise<MethodRun> {
  const run: MethodRun = {
    name: `otava ${version}`,
    available: true,
    detections: new Map(),
    delays: new Map(),
  };
  const bySeries = new Map(corpus.map((s) => [s.id, s]));
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    const o = JSON.parse(line) as { id: number; cps: number[]; delays: (number | null)[] };
    run.detections.set(
      o.id,
      o.cps.map((index): Detection => ({ index, detectedIndex: null })),
    );
    const s = bySeries.get(o.id)!;
    s.truth.forEach((c, i) => run.delays!.set(`${o.id}:${c.index}`, o.delays[i] ?? null));
  }
  return run;
}

function fmt(v: number | null, kind: 'pct' | 'num' | 'rate' | 'int'): string {
  if (v === null || Number.isNaN(v)) return '–';
  if (kind === 'pct') return (100 * v).toFixed(1) + '%';
  if (kind === 'rate') return v.toFixed(3);
  if (kind === 'int') return String(Math.round(v));
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

function printTable(
  methods: { name: string; available: boolean; note?: string; rows: Row[] }[],
): string {
  const header = [
    'row',
    'method',
    'changes',
    'precision',
    'recall',
    'F1',
    'delay (med)',
    'loc error (med)',
    'loc ≤±5',
    'FA/1k pts',
  ];
  const lines: string[][] = [header];
  const labels = methods.find((m) => m.available)!.rows.map((r) => r.label);
  labels.forEach((label, i) => {
    for (const m of methods) {
      if (!m.available) {
        lines.push([label, m.name, '', `unavailable: ${m.note ?? ''}`, '', '', '', '', '', '']);
        continue;
      }
      const r = m.rows[i]!;
      lines.push([
        label,
        m.name,
        String(r.changes),
        fmt(r.precision, 'pct'),
        fmt(r.recall, 'pct'),
        fmt(r.f1, 'pct'),
        fmt(r.medianDelay, 'num'),
        fmt(r.medianLocError, 'num'),
        fmt(r.within5, 'pct'),
        r.falseAlarmsPer1k === null ? '–' : `${fmt(r.falseAlarmsPer1k, 'rate')} (${r.falseAlarms})`,
      ]);
    }
  });
  const widths = header.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  const render = (l: string[]) =>
    '| ' + l.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ') + ' |';
  const sep = '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|';
  return [render(lines[0]!), sep, ...lines.slice(1).map(render)].join('\n');
}

interface Bar {
  name: string;
  value: number | null;
  target: string;
  pass: boolean;
}

function checkBars(rows: Row[], otava: Row[] | null): { text: string; items: Bar[] } {
  const row = (label: string) => rows.find((r) => r.label === label)!;
  const all = row('all series');
  const items: Bar[] = [
    {
      name: 'false alarms per 1,000 change-free points',
      value: all.falseAlarmsPer1k,
      target: '≤ 0.05',
      pass: (all.falseAlarmsPer1k ?? 1) <= 0.05,
    },
    {
      name: 'recall, steps ≥1.5× with ≥20 events/min',
      value: row('>=1.5x, >=20 ev/min').recall,
      target: '≥ 95%',
      pass: row('>=1.5x, >=20 ev/min').recall >= 0.95,
    },
    { name: 'F1 overall', value: all.f1, target: '≥ 0.90', pass: (all.f1 ?? 0) >= 0.9 },
    {
      name: 'median delay, large steps (≥2×), points',
      value: row('large >=2x').medianDelay,
      target: '≤ 5',
      pass: (row('large >=2x').medianDelay ?? Infinity) <= 5,
    },
    {
      name: 'onsets within ±5 points',
      value: all.within5,
      target: '≥ 90%',
      pass: (all.within5 ?? 0) >= 0.9,
    },
  ];
  if (otava) {
    // Per row, the row's headline: F1 for series rows (false-alarm rate for the controls), recall for change rows.
    let better = 0;
    const worse: string[] = [];
    rows.forEach((r, i) => {
      const o = otava[i]!;
      let ok: boolean;
      if (r.level === 'series' && r.changes === 0)
        ok = (r.falseAlarmsPer1k ?? 0) <= (o.falseAlarmsPer1k ?? 0);
      else if (r.level === 'series')
        ok = (r.f1 ?? 0) >= (o.f1 ?? 0) && (r.falseAlarmsPer1k ?? 0) <= (o.falseAlarmsPer1k ?? 0);
      else ok = r.recall >= o.recall;
      if (ok) better++;
      else worse.push(r.label);
    });
    items.push({
      name: 'at least as good as Otava on every row',
      value: better / rows.length,
      target: `${rows.length}/${rows.length} rows`,
      pass: worse.length === 0,
    });
    if (worse.length) items[items.length - 1]!.name += ` (not on: ${worse.join('; ')})`;
  }
  const text = [
    '',
    'First bar (issue #5):',
    ...items.map(
      (b) =>
        `  ${b.pass ? 'PASS' : 'FAIL'}  ${b.name}: ${b.value === null ? '–' : +b.value.toFixed(3)} (target ${b.target})`,
    ),
  ].join('\n');
  return { text, items };
}
