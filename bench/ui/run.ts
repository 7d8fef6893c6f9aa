/**
 * UI benchmark (docs/ui.md): in Chromium, with the production build,
 *  1. render a 30-day, 1-minute series (43,200 points × 3 quantile lines)
 *     with 50 deploy markers in the Explorer: time from the data's arrival
 *     (response body read) to the chart painted (uPlot drawn + next frame);
 *  2. the gzip size of what each route downloads, the initial route first.
 * The API is served from memory so only the browser is measured.
 *
 *   npm run bench:ui [-- --runs 11 --no-build]   (builds apps/web first unless --no-build)
 * Prints numbers and writes bench/results/ui.json.
 */
import { createServer, type Server } from 'node:http';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { launchChromium } from '../../e2e/fixtures/browser.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'apps/web/dist');
const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 11;
const TARGET_PAINT_MS = 100;
const TARGET_INITIAL_GZIP_KB = 350;

// ---------- bundle sizes ----------

interface ManifestChunk {
  file: string;
  imports?: string[];
  css?: string[];
  isEntry?: boolean;
}

function gz(file: string): number {
  return gzipSync(readFileSync(path.join(DIST, file)), { level: 9 }).length;
}

/** Files a route downloads: the entry, its static imports and CSS, and the route chunk with its own. */
function routeFiles(manifest: Record<string, ManifestChunk>, keys: string[]): Set<string> {
  const files = new Set<string>(['index.html']);
  const walk = (key: string) => {
    const c = manifest[key];
    if (!c || files.has(c.file)) return;
    files.add(c.file);
    for (const css of c.css ?? []) files.add(css);
    for (const i of c.imports ?? []) walk(i);
  };
  for (const k of keys) walk(k);
  return files;
}

function bundleSizes() {
  const manifest = JSON.parse(
    readFileSync(path.join(DIST, '.vite/manifest.json'), 'utf8'),
  ) as Record<string, ManifestChunk>;
  const entry = Object.keys(manifest).find((k) => manifest[k]!.isEntry)!;
  const routes: Record<string, string> = {
    'overview (/ , initial route)': 'src/pages/OverviewPage.tsx',
    'regression (/regressions/:id)': 'src/pages/RegressionPage.tsx',
    'explorer (/explorer)': 'src/pages/ExplorerPage.tsx',
    'slo detail (/slos/:id)': 'src/pages/SloDetailPage.tsx',
    'deploys (/deploys)': 'src/pages/DeploysPage.tsx',
  };
  const out: Record<string, { files: number; gzip_kb: number; raw_kb: number }> = {};
  for (const [name, key] of Object.entries(routes)) {
    const files = routeFiles(manifest, [entry, key]);
    let g = 0;
    let raw = 0;
    for (const f of files) {
      g += gz(f);
      raw += statSync(path.join(DIST, f)).size;
    }
    out[name] = { files: files.size, gzip_kb: round(g / 1024), raw_kb: round(raw / 1024) };
  }
  return out;
}

// ---------- the 30-day series ----------

const MIN = 60_000;
const POINTS = 43_200;
const MARKERS = 50;

function quantilesBody(toMs: number) {
  const fromMs = toMs - POINTS * MIN;
  const points = new Array(POINTS);
  let seed = 1;
  const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let i = 0; i < POINTS; i++) {
    const t = fromMs + i * MIN;
    // Diurnal swing plus a step at day 20 (the kind of thing the chart must show).
    const base = (1 + 0.3 * Math.sin((2 * Math.PI * i) / 1440)) * (i > 20 * 1440 ? 8 : 1);
    points[i] = {
      t: new Date(t).toISOString(),
      count: 800 + Math.round(rand() * 400),
      q: {
        '0.5': +(base * (1 + rand() * 0.1)).toFixed(3),
        '0.9': +(base * 2.2 * (1 + rand() * 0.1)).toFixed(3),
        '0.99': +(base * 5 * (1 + rand() * 0.3)).toFixed(3),
      },
    };
  }
  const series = {
    id: '1',
    service: 'checkout',
    op: 'request',
    view: 'server',
    name: 'GET /lookup',
    peer: null,
    hosts: ['web-1'],
    first_seen: new Date(fromMs).toISOString(),
    last_seen: new Date(toMs).toISOString(),
  };
  return {
    series,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    step_ms: MIN,
    points,
  };
}

/** The same answer in the columns layout (`layout=columns`), which the UI asks for. */
function columnsBody(toMs: number) {
  const { points, ...head } = quantilesBody(toMs);
  const keys = Object.keys(points[0].q);
  return {
    ...head,
    columns: {
      t: points.map((p: { t: string }) => Date.parse(p.t)),
      count: points.map((p: { count: number }) => p.count),
      q: Object.fromEntries(
        keys.map((k) => [k, points.map((p: { q: Record<string, number> }) => p.q[k])]),
      ),
    },
  };
}

function deploysBody(toMs: number) {
  const kinds = ['code', 'dependency', 'kernel', 'config', 'infra'];
  const deploys = Array.from({ length: MARKERS }, (_, i) => ({
    id: String(i + 1),
    service: i % 5 === 2 ? null : 'checkout',
    environment: 'prod',
    hosts: i % 5 === 2 ? ['web-1'] : [],
    kind: kinds[i % 5],
    component: i % 5 === 1 ? 'hyper' : null,
    from_version: `1.${i}`,
    to_version: `1.${i + 1}`,
    commit: null,
    url: null,
    description: `deploy ${i + 1}`,
    at: new Date(toMs - ((i + 0.5) * (POINTS * MIN)) / MARKERS).toISOString(),
    source: 'api',
  }));
  return { deploys };
}

// ---------- a static server for the build, with the API answered from memory ----------

/** Quantiles are held until the bench releases them, so it can sample the page's CPU clock right before. */
interface Gate {
  requested: Promise<void>;
  release: () => void;
}
let gate: Gate | null = null;
/** The layout the page asked for, reported with the numbers. */
let lastLayout = 'points';
function newGate(): Gate {
  let onRequest!: () => void;
  let release!: () => void;
  const requested = new Promise<void>((r) => (onRequest = r));
  const released = new Promise<void>((r) => (release = r));
  const g: Gate & { onRequest: () => void; released: Promise<void> } = {
    requested,
    release,
    onRequest,
    released,
  };
  return g;
}

async function serve(toMs: number): Promise<{ url: string; server: Server }> {
  const pointsJson = JSON.stringify(quantilesBody(toMs));
  const columnsJson = JSON.stringify(columnsBody(toMs));
  const deploys = JSON.stringify(deploysBody(toMs));
  const seriesList = JSON.stringify({ series: [quantilesBody(toMs).series] });
  const types: Record<string, string> = {
    '.js': 'text/javascript',
    '.css': 'text/css',
    '.html': 'text/html',
    '.svg': 'image/svg+xml',
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const json = (body: string, delayMs = 0) =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      }, delayMs);
    if (url.pathname === '/api/v1/series') return json(seriesList);
    // Quantiles answer last (the bench releases them), so the measured paint includes the 50 markers.
    if (url.pathname === '/api/v1/series/1/quantiles') {
      // Answer in the layout asked for, as the server does.
      const quantiles = url.searchParams.get('layout') === 'columns' ? columnsJson : pointsJson;
      lastLayout = url.searchParams.get('layout') ?? 'points';
      const g = gate as (Gate & { onRequest: () => void; released: Promise<void> }) | null;
      if (!g) return json(quantiles, 400);
      g.onRequest();
      return void g.released.then(() => json(quantiles));
    }
    if (url.pathname === '/api/v1/series/1/heatmap')
      return json(
        JSON.stringify({ series_id: '1', from: '', to: '', step_ms: 7_200_000, points: [] }),
      );
    if (url.pathname === '/api/v1/deploys') return json(deploys);
    if (url.pathname.startsWith('/api/')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({ error: 'not_found', message: `no route for GET ${url.pathname}` }),
      );
    }
    const file = path.join(DIST, url.pathname);
    const f = existsSync(file) && statSync(file).isFile() ? file : path.join(DIST, 'index.html');
    res.writeHead(200, { 'content-type': types[path.extname(f)] ?? 'application/octet-stream' });
    res.end(readFileSync(f));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function renderTimes(): Promise<{
  runs: number[];
  cpu_runs: number[];
  warm_runs: number[];
  warm_cpu_runs: number[];
  point_count: number;
  markers_drawn: number;
  layout: string;
  json_mb: number;
}> {
  const toMs = Math.floor(Date.now() / MIN) * MIN;
  const { url, server } = await serve(toMs);
  const browser = await launchChromium();
  const runs: number[] = [];
  const cpuRuns: number[] = [];
  const warmRuns: number[] = [];
  const warmCpu: number[] = [];
  let markersDrawn = 0;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    // Main-thread CPU time of the page: unlike wall-clock, barely moved by other load on the machine.
    const threadTime = async () => {
      const { metrics } = (await cdp.send('Performance.getMetrics')) as {
        metrics: Array<{ name: string; value: number }>;
      };
      return metrics.find((m) => m.name === 'ThreadTime')!.value * 1000;
    };
    const link = `${url}/explorer?series=1&from=${new Date(toMs - POINTS * MIN).toISOString()}&to=${new Date(toMs).toISOString()}&step=1m&q=0.5,0.9,0.99&refresh=off`;
    const paintCount = () =>
      page.evaluate(() => performance.getEntriesByName('onset:painted:quantiles').length);
    /**
     * One measurement: `trigger` makes the page ask for the series; once everything else has
     * rendered (`settleMs`), the answer is released and the paint that follows it is timed,
     * with the renderer's CPU over the same interval.
     */
    const measure = async (trigger: () => Promise<unknown>, settleMs: number) => {
      gate = newGate();
      await trigger();
      await gate.requested;
      await page.waitForTimeout(settleMs);
      // Counted while the answer is held: 0 on a fresh load, the earlier paints on a refresh.
      const before = await paintCount();
      const cpu0 = await threadTime();
      gate.release();
      await page.waitForFunction(
        (n) => performance.getEntriesByName('onset:painted:quantiles').length > n,
        before,
        { timeout: 30_000, polling: 50 },
      );
      const cpu = (await threadTime()) - cpu0;
      gate = null;
      // The paint after the data arrived (a marker-less first paint, if any, comes before it).
      const ms = await page.evaluate(() => {
        const arrived = performance
          .getEntriesByName('onset:arrived')
          .filter((e) => String((e as PerformanceMark).detail).includes('/quantiles'));
        const t0 = arrived[arrived.length - 1]!.startTime;
        const painted = performance
          .getEntriesByName('onset:painted:quantiles')
          .find((e) => e.startTime >= t0);
        return painted ? painted.startTime - t0 : NaN;
      });
      return { ms, cpu };
    };
    // Cold: a fresh page load each time (goto resets the performance entries).
    for (let i = 0; i < RUNS + 1; i++) {
      const { ms, cpu } = await measure(() => page.goto(link), 300);
      markersDrawn = await page.locator('[data-testid="chart-quantiles"] .marker-chip').count();
      if (i > 0) {
        // the first load warms the browser's caches
        runs.push(ms);
        cpuRuns.push(cpu);
      }
    }
    // Warm: the same page fetches the series again (what auto-refresh and the refresh button do).
    for (let i = 0; i < RUNS; i++) {
      const { ms, cpu } = await measure(
        () => page.getByRole('button', { name: 'Refresh now' }).click(),
        200,
      );
      warmRuns.push(ms);
      warmCpu.push(cpu);
    }
  } finally {
    await browser.close();
    server.close();
  }
  return {
    runs,
    cpu_runs: cpuRuns.map((x) => round(x)),
    warm_runs: warmRuns,
    warm_cpu_runs: warmCpu.map((x) => round(x)),
    point_count: POINTS * 3,
    markers_drawn: markersDrawn,
    layout: lastLayout,
    json_mb: round(
      (lastLayout === 'columns'
        ? JSON.stringify(columnsBody(toMs))
        : JSON.stringify(quantilesBody(toMs))
      ).length / 1e6,
    ),
  };
}

function round(x: number, d = 1): number {
  return Number(x.toFixed(d));
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    median: round(s[Math.floor(s.length / 2)]!),
    min: round(s[0]!),
    max: round(s[s.length - 1]!),
  };
}

if (process.argv.includes('--serve')) {
  // Keep the build and the in-memory API up for profiling by hand.
  const toMs = Math.floor(Date.now() / MIN) * MIN;
  const { url } = await serve(toMs);
  console.log(
    `${url}/explorer?series=1&from=${new Date(toMs - POINTS * MIN).toISOString()}&to=${new Date(toMs).toISOString()}&step=1m&q=0.5,0.9,0.99&refresh=off`,
  );
  await new Promise(() => {});
}

// Measure the current code: build it (skip with --no-build to reuse apps/web/dist).
if (!process.argv.includes('--no-build') || !existsSync(path.join(DIST, '.vite/manifest.json'))) {
  const b = spawnSync('npm', ['run', '--silent', 'build:web'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (b.status !== 0) {
    console.error('bench/ui: `npm run build:web` failed');
    process.exit(1);
  }
}
const bundles = bundleSizes();
console.log('Bundle (gzip, what each route downloads on a cold load):');
for (const [name, b] of Object.entries(bundles))
  console.log(
    `  ${name.padEnd(34)} ${String(b.gzip_kb).padStart(7)} KB gzip  (${b.raw_kb} KB raw, ${b.files} files)`,
  );
const initial = Object.values(bundles)[0]!.gzip_kb;
console.log(
  `  initial route: ${initial} KB gzip, target < ${TARGET_INITIAL_GZIP_KB} KB → ${initial < TARGET_INITIAL_GZIP_KB ? 'OK' : 'OVER'}`,
);

const loadBefore = os.loadavg()[0]!;
const render = await renderTimes();
const load = round(Math.max(loadBefore, os.loadavg()[0]!), 2);
const st = stats(render.runs);
console.log(
  `\nExplorer, 30 days at 1 min: ${render.point_count.toLocaleString()} points (3 lines), ${render.markers_drawn} markers, ${render.json_mb} MB JSON (${render.layout} layout)`,
);
console.log(
  `  data arrival → chart painted: median ${st.median} ms (min ${st.min}, max ${st.max}) over ${render.runs.length} loads; target < ${TARGET_PAINT_MS} ms → ${st.median < TARGET_PAINT_MS ? 'OK' : 'OVER'}`,
);
const cpu = stats(render.cpu_runs);
console.log(
  `  main-thread CPU time for it: median ${cpu.median} ms (min ${cpu.min}, max ${cpu.max})`,
);
const warm = stats(render.warm_runs);
const warmCpu = stats(render.warm_cpu_runs);
console.log(
  `  warm (refresh in the same page): median ${warm.median} ms (min ${warm.min}, max ${warm.max}); main-thread CPU median ${warmCpu.median} ms`,
);
console.log(
  `  (load average ${load} on ${os.cpus().length} CPUs while measuring${load > os.cpus().length ? ': the machine was busy, wall-clock times are inflated' : ''})`,
);

await mkdir(path.join(ROOT, 'bench/results'), { recursive: true });
await writeFile(
  path.join(ROOT, 'bench/results/ui.json'),
  JSON.stringify(
    {
      at: new Date().toISOString(),
      bundle: {
        routes: bundles,
        initial_route_gzip_kb: initial,
        target_kb: TARGET_INITIAL_GZIP_KB,
      },
      render: {
        ...render,
        ...st,
        cpu: {
          ...cpu,
          what: 'renderer main-thread CPU time over the same interval (CDP ThreadTime)',
        },
        warm: {
          ...warm,
          cpu_median: warmCpu.median,
          what: 'refetch in an open page (auto-refresh, refresh button): warm JIT',
        },
        load_average: load,
        cpus: os.cpus().length,
        unit: 'ms',
        target_ms: TARGET_PAINT_MS,
        what: 'response body read → uPlot drawn + next animation frame',
      },
    },
    null,
    2,
  ) + '\n',
);
console.log('\nwrote bench/results/ui.json');
