/**
 * bench/detect/pure.ts: one detection pass of the pure step detector over N series ×
 * D days of 1-minute points (default 10,000 × 7 = 100.8 M points), cold (every
 * series from empty) and incremental (one new minute per series, with the
 * detector in memory and through its JSON state, as a stateless worker would).
 * Prints time, throughput and peak RSS; writes bench/results/detect.json.
 *
 *   node --import tsx bench/detect/pure.ts [--series 10000 --days 7 --workers 2]
 *
 * (bench/detect/run.ts is the DB-backed pass of the server, phase 2.)
 *
 * Series are generated on the fly (generation is not timed): per-minute p50 and
 * p99 of lognormal events as the histograms report them (a small count's "p99"
 * is its maximum), 1-1,000 events a minute, diurnal swings, spikes, missing
 * minutes, and a step in 30% of the series. Work is sharded over worker
 * threads (one per core by default); the pass is embarrassingly parallel.
 * Results: bench/results/detect-pure.json.
 */
import { mulberry32Open } from '@onset/testkit/random';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StepDetector, type MinutePoint } from '@onset/core';
import { orderStatisticZ } from '../../packages/core/src/detect/stats.ts';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 1);

interface Job {
  from: number;
  to: number;
  minutes: number;
  seed: number;
}

interface ColdResult {
  ms: number;
  points: number;
  changes: number;
  stateBytes: number;
  checkpointMs: number;
}

interface IncResult {
  memoryMs: number;
  jsonMs: number;
  changes: number;
}

// ---------------------------------------------------------------------------
// Worker: owns a shard of series.

function mulberry(seed: number) {
  const next = mulberry32Open(seed);
  let spare = NaN;
  const normal = () => {
    if (!Number.isNaN(spare)) {
      const s = spare;
      spare = NaN;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(next()));
    const th = 2 * Math.PI * next();
    spare = r * Math.sin(th);
    return r * Math.cos(th);
  };
  return { next, normal };
}

const zTable = { p50: new Float64Array(1001), p99: new Float64Array(1001) };
for (let n = 1; n <= 1000; n++) {
  zTable.p50[n] = orderStatisticZ(0.5, n);
  zTable.p99[n] = orderStatisticZ(0.99, n);
}

/** Parameters of series `id`, and a writer of its minute `i` into `p` (false: no data that minute). */
function seriesModel(id: number, seed: number) {
  const r = mulberry(seed * 7919 + id * 104729 + 1);
  const rate = Math.exp(r.next() * Math.log(1000)); // 1-1,000 events a minute
  const median = Math.exp(Math.log(0.05) + r.next() * Math.log(1e4)); // 50 µs .. 500 ms
  const sigma = 0.3 + 0.7 * r.next();
  const diurnal = r.next() < 0.5 ? 0.05 + 0.3 * r.next() : 0;
  const swing = diurnal ? 0.3 + 0.5 * r.next() : 0;
  const phase = r.next() * 1440;
  const step =
    r.next() < 0.3
      ? {
          at: Math.floor(r.next() * 10_000),
          factor: Math.exp((r.next() < 0.5 ? -1 : 1) * (0.2 + 3 * r.next())),
        }
      : null;
  const noise = mulberry(seed * 31 + id);
  return (i: number, p: MinutePoint): boolean => {
    const angle = (2 * Math.PI * (i + phase)) / 1440;
    const lambda = rate * (1 + swing * Math.sin(angle));
    const n = Math.max(0, Math.round(lambda + Math.sqrt(lambda) * noise.normal()));
    const gap = noise.next() < 0.01;
    if (n === 0 || gap) return false;
    const nn = Math.min(n, 1000);
    let level =
      Math.log(median) +
      diurnal * Math.sin(angle) +
      (step && i >= step.at ? Math.log(step.factor) : 0);
    if (noise.next() < 0.003) level += Math.log(3 + 27 * noise.next()); // spike minute
    // Sample quantiles of n lognormal events: centred on their order-statistic levels, noisier when n is small.
    const y50 = level + sigma * (zTable.p50[nn]! + (1.25 / Math.sqrt(n)) * noise.normal());
    const y99 = Math.max(
      y50,
      level + sigma * (zTable.p99[nn]! + (Math.min(2.5, 3 / Math.sqrt(n)) + 0.1) * noise.normal()),
    );
    p.t = T0 + i * MINUTE;
    p.count = n;
    p.p50 = Math.exp(y50) * 1000; // µs
    p.p99 = Math.exp(y99) * 1000;
    return true;
  };
}

async function worker(job: Job): Promise<void> {
  const port = parentPort!;
  const n = job.to - job.from;
  const detectors: StepDetector[] = new Array(n);
  const states: string[] = new Array(n);
  const models = Array.from({ length: n }, (_, k) => seriesModel(job.from + k, job.seed));
  const buf: MinutePoint[] = Array.from({ length: job.minutes }, () => ({
    t: 0,
    count: 0,
    p50: 0,
    p99: 0,
  }));

  // Cold: each series from an empty detector over all its minutes.
  const cold: ColdResult = { ms: 0, points: 0, changes: 0, stateBytes: 0, checkpointMs: 0 };
  for (let k = 0; k < n; k++) {
    let len = 0;
    for (let i = 0; i < job.minutes; i++) if (models[k]!(i, buf[len]!)) len++;
    const pts = len === buf.length ? buf : buf.slice(0, len);
    const t0 = performance.now();
    const d = new StepDetector();
    cold.changes += d.pushAll(pts).length;
    const t1 = performance.now();
    const json = JSON.stringify(d.toJSON());
    cold.checkpointMs += performance.now() - t1;
    cold.ms += t1 - t0;
    cold.points += len;
    cold.stateBytes += json.length;
    detectors[k] = d;
    states[k] = json;
  }
  port.postMessage({ type: 'cold', result: cold });

  // Incremental: one new minute for every series.
  await new Promise<void>((resolve) => port.once('message', () => resolve()));
  const p: MinutePoint = { t: 0, count: 0, p50: 0, p99: 0 };
  const inc: IncResult = { memoryMs: 0, jsonMs: 0, changes: 0 };
  const next: MinutePoint[] = [];
  for (let k = 0; k < n; k++) {
    let i = job.minutes;
    while (!models[k]!(i, p)) i++;
    next.push({ ...p });
  }
  let t0 = performance.now();
  for (let k = 0; k < n; k++) inc.changes += detectors[k]!.push(next[k]!).length;
  inc.memoryMs = performance.now() - t0;
  // The same minute through stored state: parse, restore, push, serialise.
  t0 = performance.now();
  for (let k = 0; k < n; k++) {
    const d = StepDetector.fromJSON(JSON.parse(states[k]!));
    d.push(next[k]!);
    states[k] = JSON.stringify(d.toJSON());
  }
  inc.jsonMs = performance.now() - t0;
  port.postMessage({ type: 'inc', result: inc });
}

// ---------------------------------------------------------------------------
// Main: shard, collect, sample RSS, report.

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      series: { type: 'string', default: '10000' },
      days: { type: 'string', default: '7' },
      workers: { type: 'string', default: String(os.availableParallelism()) },
      seed: { type: 'string', default: '1' },
    },
  });
  const series = Number(values.series);
  const minutes = Math.round(Number(values.days) * 1440);
  const workers = Math.max(1, Math.min(Number(values.workers), series));
  const seed = Number(values.seed);
  console.log(
    `pure detector bench: ${series} series × ${minutes} minutes, ${workers} worker thread(s), node ${process.version}, ${os.cpus().length} cpus`,
  );

  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const file = fileURLToPath(import.meta.url);
  const pool = Array.from({ length: workers }, (_, w) => {
    const from = Math.floor((w * series) / workers);
    const to = Math.floor(((w + 1) * series) / workers);
    // A worker does not inherit tsx's loader: register it, then load this file.
    const boot = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(pathToFileURL(file).href)}); })`;
    return new Worker(boot, { eval: true, workerData: { from, to, minutes, seed } satisfies Job });
  });
  const waitAll = <T>(type: string) =>
    Promise.all(
      pool.map(
        (w) =>
          new Promise<T>((resolve, reject) => {
            const onMsg = (m: { type: string; result: T }) => {
              if (m.type === type) {
                w.off('message', onMsg);
                resolve(m.result);
              }
            };
            w.on('message', onMsg);
            w.once('error', reject);
          }),
      ),
    );

  let wall = performance.now();
  const cold = await waitAll<ColdResult>('cold');
  const coldWall = (performance.now() - wall) / 1000;
  const points = cold.reduce((a, c) => a + c.points, 0);
  const coldCpu = cold.reduce((a, c) => a + c.ms, 0) / 1000;
  const stateBytes = cold.reduce((a, c) => a + c.stateBytes, 0) / series;
  const rssAfterCold = process.memoryUsage().rss;

  wall = performance.now();
  for (const w of pool) w.postMessage('go');
  const inc = await waitAll<IncResult>('inc');
  const incWall = (performance.now() - wall) / 1000;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  await Promise.all(pool.map((w) => w.terminate()));

  // Each worker's slowest shard bounds the pass; report the detector's own time per worker.
  const coldDetect = Math.max(...cold.map((c) => c.ms)) / 1000;
  const incMemory = Math.max(...inc.map((c) => c.memoryMs)) / 1000;
  const incJson = Math.max(...inc.map((c) => c.jsonMs)) / 1000;
  const result = {
    series,
    minutes,
    workers,
    points,
    changes_cold: cold.reduce((a, c) => a + c.changes, 0),
    cold: {
      wall_s: +coldWall.toFixed(2),
      detect_s: +coldDetect.toFixed(2),
      detect_cpu_s: +coldCpu.toFixed(2),
      ns_per_point: +((coldCpu * 1e9) / points).toFixed(0),
    },
    incremental: {
      in_memory_s: +incMemory.toFixed(3),
      via_json_state_s: +incJson.toFixed(3),
      wall_s: +incWall.toFixed(3),
    },
    state_bytes_json: Math.round(stateBytes),
    rss_mb: { peak: Math.round(peakRss / 2 ** 20), after_cold: Math.round(rssAfterCold / 2 ** 20) },
    bars: { cold_s: 60, incremental_s: 5, rss_mb: 1024 },
    load_average: os.loadavg().map((x) => +x.toFixed(2)),
  };
  console.log(
    [
      `cold pass:        ${result.cold.detect_s} s detecting (${result.cold.ns_per_point} ns/point/core, ${points.toLocaleString()} points; ${result.cold.wall_s} s wall incl. generating)   bar < 60 s`,
      `incremental:      ${result.incremental.in_memory_s} s for one new minute of every series in memory; ${result.incremental.via_json_state_s} s through JSON state   bar < 5 s`,
      `memory:           peak RSS ${result.rss_mb.peak} MB (${series} detectors and their JSON states held)   bar < 1024 MB`,
      `state:            ${(stateBytes / 1024).toFixed(1)} KB of JSON per series`,
      `load average:     ${result.load_average.join(' ')} (other work on this machine inflates times)`,
    ].join('\n'),
  );
  const { writeResult } = await import('../lib/harness.ts');
  await writeResult('detect-pure', result);
}

if (isMainThread) await main();
else await worker(workerData as Job);
