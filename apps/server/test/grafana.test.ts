import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runSloPass } from '../src/slos/evaluate.ts';
import {
  expandMacros,
  interpolateVariables,
  type TimeRange,
  type Variables,
} from './grafana-sql.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GRAFANA = path.join(ROOT, 'deploy/grafana');
const DASHBOARD_DIR = path.join(GRAFANA, 'dashboards');
const GRAFANA_ROLE = 'onset_grafana';
const GRAFANA_PASSWORD = 'grafana-test-password';

// ---------------------------------------------------------------------------
// The dashboards as Grafana would load them.

interface Target {
  refId: string;
  rawSql: string;
  format?: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
  fieldConfig?: {
    defaults?: { unit?: string; custom?: { scaleDistribution?: { type: string; log?: number } } };
  };
  options?: Record<string, unknown>;
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: {
    list: Array<{
      name: string;
      type: string;
      query: string;
      multi?: boolean;
      includeAll?: boolean;
      datasource?: { uid: string };
    }>;
  };
  annotations: {
    list: Array<{
      name: string;
      builtIn?: number;
      datasource?: { type: string; uid: string };
      target?: Target;
    }>;
  };
}

const dashboardFiles = readdirSync(DASHBOARD_DIR).filter((f) => f.endsWith('.json'));
const dashboards: Array<[string, Dashboard]> = dashboardFiles.map((f) => [
  f,
  JSON.parse(readFileSync(path.join(DASHBOARD_DIR, f), 'utf8')),
]);
const allPanels = (d: Dashboard): Panel[] => d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);

const datasources = YAML.parse(
  readFileSync(path.join(GRAFANA, 'provisioning/datasources/onset.yaml'), 'utf8'),
) as {
  datasources: Array<{ uid: string; type: string; name: string }>;
};
const DS = datasources.datasources[0]!;

const TIME_UNITS = new Set([
  'ns',
  'µs',
  'us',
  'ms',
  's',
  'm',
  'h',
  'd',
  'dtdurationms',
  'dtdurations',
]);
const isLatencyPanel = (p: Panel) =>
  p.type === 'heatmap' ||
  (p.type === 'timeseries' && TIME_UNITS.has(p.fieldConfig?.defaults?.unit ?? ''));

// ---------------------------------------------------------------------------
// A real Onset with real ingested data, and Grafana's own database user.

let server: TestServer;
let grafanaDb: pg.Client;
const NOW = Date.now();
const MIN = 60_000;
const START = Math.floor((NOW - 40 * MIN) / MIN) * MIN;
const STEP_AT = START + 20 * MIN;

/** Spans through the real OTel SDK and OTLP/protobuf exporter, one provider per resource. */
async function exportSpans(
  resource: Record<string, string>,
  emit: (tracer: ReturnType<BasicTracerProvider['getTracer']>) => void,
): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` }), {
        maxExportBatchSize: 500,
        maxQueueSize: 20_000,
      }),
    ],
  });
  emit(provider.getTracer('grafana-test'));
  await provider.forceFlush();
  await provider.shutdown();
}

async function ingest(): Promise<void> {
  // checkout GET /cart: 5 ms until STEP_AT, then 50 ms, on two hosts with different kernels.
  for (const [host, kernel] of [
    ['node-1', '4.4.0-138'],
    ['node-2', '4.15.0-36'],
  ] as const) {
    await exportSpans(
      {
        'service.name': 'checkout',
        'host.name': host,
        'os.version': kernel,
        'service.version': '1.4.2',
      },
      (tracer) => {
        for (let t = START; t < NOW - MIN; t += 10_000) {
          const ms = (t < STEP_AT ? 5 : 50) * (1 + ((t / 10_000) % 7) / 100);
          const span = tracer.startSpan('GET /cart', {
            kind: SpanKind.SERVER,
            startTime: t,
            attributes: { 'http.request.method': 'GET', 'http.route': '/cart' },
          });
          span.end(t + ms);
        }
        // Unmounts: slow only on the new kernel (incident 5).
        for (let t = START; t < NOW - MIN; t += 60_000) {
          const span = tracer.startSpan('umount', {
            kind: SpanKind.INTERNAL,
            startTime: t,
            attributes: { 'fs.mountpoint': '/var/lib/containers' },
          });
          span.end(t + (kernel.startsWith('4.15') ? 8_000 : 25));
        }
      },
    );
  }
  // A client calling urlite, and urlite's server spans of the same calls.
  await exportSpans({ 'service.name': 'frontend', 'host.name': 'web-1' }, (tracer) => {
    for (let t = START; t < NOW - MIN; t += 30_000) {
      const span = tracer.startSpan('GET /lookup', {
        kind: SpanKind.CLIENT,
        startTime: t,
        attributes: {
          'http.request.method': 'GET',
          'http.route': '/lookup',
          'peer.service': 'urlite',
        },
      });
      span.end(t + 41);
    }
  });
  // A spawn with microsecond durations next to multi-second ones: the log scale matters.
  await exportSpans({ 'service.name': 'pageserver', 'host.name': 'ps-1' }, (tracer) => {
    for (let t = START; t < NOW - MIN; t += 20_000) {
      const span = tracer.startSpan('spawn', {
        kind: SpanKind.INTERNAL,
        startTime: t,
        attributes: { 'process.executable.name': 'postgres' },
      });
      span.end(t + 0.052);
    }
  });
}

async function api(method: string, url: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}${url}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
}

beforeAll(async () => {
  // Grafana's role exists before Onset migrates (as the compose init script does), so the migration grants it the views.
  const admin = new pg.Client(process.env.ONSET_TEST_PG_URL);
  await admin.connect();
  await admin.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${GRAFANA_ROLE}') THEN
        CREATE ROLE ${GRAFANA_ROLE} LOGIN PASSWORD '${GRAFANA_PASSWORD}';
      END IF;
    END $$`);
  await admin.end();

  server = await startTestServer();
  await ingest();
  // Compaction folds closed minutes into hourly rollups (what the scheduler does every minute).
  expect((await server.onset.maintain()) as { compacted: number }).toMatchObject({
    compacted: expect.any(Number),
  });
  const hourly = await server.onset.pool.query(`SELECT count(*)::int AS n FROM histograms_hourly`);
  expect(hourly.rows[0].n).toBeGreaterThan(0);
  for (const marker of [
    {
      service: 'checkout',
      kind: 'code',
      from_version: '1.4.1',
      to_version: '1.4.2',
      commit: '9f2c1e0aa',
      description: 'cart: new pricing',
      at: new Date(STEP_AT - 30_000).toISOString(),
    },
    {
      hosts: ['node-2'],
      kind: 'kernel',
      component: 'linux',
      from_version: '4.4.0-138',
      to_version: '4.15.0-36',
      at: new Date(START + 5 * MIN).toISOString(),
    },
    {
      service: 'frontend',
      kind: 'dependency',
      component: 'hyper',
      from_version: '0.12.35',
      to_version: '0.13.1',
      at: new Date(START + 10 * MIN).toISOString(),
    },
  ]) {
    const res = await api('POST', '/api/v1/deploys', marker);
    expect(res.status, await res.clone().text()).toBe(201);
  }

  // An SLO on the cart (20 ms, 99%): the step to 50 ms burns it at ~100×, and the SLO pass pages.
  const slo = await api('POST', '/api/v1/slos', {
    name: 'cart latency',
    service: 'checkout',
    op: 'request',
    view: 'server',
    name_match: '^GET /cart$',
    threshold_ms: 20,
    objective: 0.99,
    window: '28d',
  });
  expect(slo.status, await slo.clone().text()).toBe(201);
  await new Promise((r) => setTimeout(r, 300)); // past the counters' settle time
  const pass = await runSloPass(server.onset.pool);
  expect(pass.fired.length, `the SLO pass fires: ${JSON.stringify(pass)}`).toBeGreaterThan(0);

  const url = new URL(server.databaseUrl);
  url.username = GRAFANA_ROLE;
  url.password = GRAFANA_PASSWORD;
  grafanaDb = new pg.Client(url.toString());
  await grafanaDb.connect();
}, 120_000);

afterAll(async () => {
  await grafanaDb?.end();
  await server?.close();
});

const RANGE: TimeRange = {
  from: new Date(NOW - 3 * 3_600_000),
  to: new Date(NOW + MIN),
  intervalMs: 5 * MIN,
};
/** A whole-hour interval: panels read the hourly rollups (plus minutes not compacted yet). */
const HOURLY: TimeRange = { ...RANGE, intervalMs: 3_600_000 };

/** Resolve a dashboard's template variables the way Grafana does on load: run each query, select All. */
async function resolveVariables(d: Dashboard): Promise<Variables> {
  const vars: Variables = {};
  for (const v of d.templating.list) {
    expect(v.type, `${d.title}: variable ${v.name}`).toBe('query');
    const sql = expandMacros(interpolateVariables(v.query, vars), RANGE);
    const { rows, fields } = await grafanaDb.query(sql);
    expect(rows.length, `${d.title}: variable ${v.name} has options`).toBeGreaterThan(0);
    vars[v.name] = {
      values: rows.map((r) => String(r[fields[0]!.name])),
      multi: Boolean(v.multi || v.includeAll),
    };
  }
  return vars;
}

async function runAsGrafana(d: Dashboard, vars: Variables, rawSql: string, range = RANGE) {
  const sql = expandMacros(interpolateVariables(rawSql, vars), range);
  try {
    return await grafanaDb.query(sql);
  } catch (err) {
    throw new Error(`${d.title}: ${(err as Error).message}\n${sql}`);
  }
}

// ---------------------------------------------------------------------------

describe('Grafana provisioning', () => {
  it('has dashboards, and each one parses and is complete', () => {
    expect(dashboardFiles).toEqual(
      expect.arrayContaining(['onset-latency.json', 'onset-slos.json']),
    );
    const uids = new Set<string>();
    for (const [file, d] of dashboards) {
      expect(d.uid, file).toMatch(/^[a-z0-9-]{1,40}$/);
      expect(uids.has(d.uid), `${file}: uid unique`).toBe(false);
      uids.add(d.uid);
      const ids = allPanels(d).map((p) => p.id);
      expect(new Set(ids).size, `${file}: panel ids unique`).toBe(ids.length);
    }
  });

  it('points every panel, query, variable and annotation at the provisioned datasource uid', () => {
    expect(DS.uid).toBe('onset-postgres');
    expect(DS.type).toBe('grafana-postgresql-datasource');
    for (const [file, d] of dashboards) {
      for (const p of allPanels(d).filter((x) => x.targets)) {
        expect(p.datasource?.uid, `${file} ${p.title}`).toBe(DS.uid);
        for (const t of p.targets!)
          expect(t.datasource?.uid ?? p.datasource?.uid, `${file} ${p.title} ${t.refId}`).toBe(
            DS.uid,
          );
      }
      for (const v of d.templating.list)
        expect(v.datasource?.uid, `${file} $${v.name}`).toBe(DS.uid);
      for (const a of d.annotations.list.filter((x) => !x.builtIn)) {
        expect(a.datasource?.uid, `${file} annotation ${a.name}`).toBe(DS.uid);
        expect(a.datasource?.type).toBe(DS.type);
      }
    }
  });

  it('draws every latency panel on a log scale', () => {
    let latencyPanels = 0;
    for (const [file, d] of dashboards) {
      for (const p of allPanels(d).filter(isLatencyPanel)) {
        latencyPanels++;
        expect(
          p.fieldConfig?.defaults?.custom?.scaleDistribution,
          `${file} ${p.title}`,
        ).toMatchObject({ type: 'log', log: 10 });
        if (p.type === 'heatmap') {
          expect((p.options?.yAxis as { unit?: string }).unit, `${file} ${p.title}`).toBe('ms');
          expect(p.options?.calculation, `${file} ${p.title}`).toMatchObject({
            yBuckets: { scale: { type: 'log' } },
          });
        }
      }
    }
    expect(latencyPanels).toBeGreaterThanOrEqual(4);
    expect(dashboards.some(([, d]) => allPanels(d).some((p) => p.type === 'heatmap'))).toBe(true);
  });

  it('gives Grafana a database user that reads the views and not the tables', async () => {
    const { rows } = await grafanaDb.query(`SELECT count(*)::int AS n FROM grafana_series`);
    expect(rows[0].n).toBeGreaterThan(0);
    await expect(grafanaDb.query(`SELECT * FROM histograms LIMIT 1`)).rejects.toThrow(
      /permission denied/,
    );
    await expect(grafanaDb.query(`SELECT * FROM deploys LIMIT 1`)).rejects.toThrow(
      /permission denied/,
    );
  });
});

describe('every SQL query of the provisioned dashboards, run against real data', () => {
  for (const [file, d] of dashboards) {
    it(`${file}: panels return the columns Grafana expects, at minute and hour intervals`, async () => {
      const vars = await resolveVariables(d);
      for (const range of [RANGE, HOURLY])
        for (const p of allPanels(d).filter((x) => x.targets)) {
          for (const t of p.targets!) {
            const res = await runAsGrafana(d, vars, t.rawSql, range);
            const where = `${file} "${p.title}" ${t.refId} at ${range.intervalMs / 60_000} min`;
            expect(res.rows.length, `${where} returns rows`).toBeGreaterThan(0);
            const cols = res.fields.map((f) => f.name);
            if ((t.format ?? 'time_series') === 'time_series') {
              expect(cols, where).toContain('time');
              // Long format: time, an optional text "metric" column, then numeric values.
              const values = cols.filter((c) => c !== 'time' && c !== 'metric');
              expect(values.length, `${where} has value columns`).toBeGreaterThan(0);
              for (const r of res.rows) {
                expect(
                  Number.isFinite(Number(r.time)) || r.time instanceof Date,
                  `${where} time`,
                ).toBe(true);
                for (const c of values)
                  expect(
                    r[c] === null || typeof r[c] === 'number',
                    `${where} ${c} is numeric`,
                  ).toBe(true);
              }
              expect(
                res.rows.some((r) => values.some((c) => typeof r[c] === 'number')),
                `${where} has values`,
              ).toBe(true);
              const times = res.rows.map((r) => Number(r.time));
              expect(
                [...times].sort((a, b) => a - b),
                `${where} ascending time`,
              ).toEqual(times);
              if (p.type === 'heatmap')
                for (const r of res.rows)
                  expect(Number.isFinite(Number(r.metric)), `${where} bucket ${r.metric}`).toBe(
                    true,
                  );
            }
          }
        }
    });

    const annotations = d.annotations.list.filter((a) => !a.builtIn);
    if (annotations.length)
      it(`${file}: annotations return time, text and tags`, async () => {
        const vars = await resolveVariables(d);
        for (const a of annotations) {
          const res = await runAsGrafana(d, vars, a.target!.rawSql);
          const cols = res.fields.map((f) => f.name);
          expect(cols, a.name).toEqual(expect.arrayContaining(['time', 'text', 'tags']));
          expect(res.rows.length, `${a.name} returns rows`).toBeGreaterThan(0);
          for (const r of res.rows) {
            expect(r.time, a.name).toBeInstanceOf(Date);
            expect(typeof r.text).toBe('string');
            expect(typeof r.tags).toBe('string');
          }
        }
      });
  }
});

describe('what the dashboards show', () => {
  const latency = dashboards.find(([f]) => f === 'onset-latency.json')![1];
  const panel = (title: RegExp) => allPanels(latency).find((p) => title.test(p.title))!;

  it('the quantile panel agrees with the Onset API and shows the step from 5 ms to 50 ms', async () => {
    const vars = await resolveVariables(latency);
    const res = await runAsGrafana(latency, vars, panel(/^Latency by series/).targets![0]!.rawSql);
    const cart = res.rows.filter((r) => r.metric === 'checkout server GET /cart');
    expect(cart.length).toBeGreaterThan(4);
    const before = cart.filter((r) => Number(r.time) * 1000 + 5 * MIN <= STEP_AT);
    const after = cart.filter((r) => Number(r.time) * 1000 >= STEP_AT);
    for (const r of before) {
      expect(r.p50).toBeGreaterThan(4.9);
      expect(r.p50).toBeLessThan(5.5);
    }
    for (const r of after) {
      expect(r.p50).toBeGreaterThan(49);
      expect(r.p50).toBeLessThan(55);
    }

    // The same numbers as GET /api/v1/series/{id}/quantiles for the same steps.
    const series = (await (
      await api('GET', '/api/v1/series?service=checkout&op=request')
    ).json()) as { series: Array<{ id: string; name: string }> };
    const id = series.series.find((s) => s.name === 'GET /cart')!.id;
    const q = (await (
      await api(
        'GET',
        `/api/v1/series/${id}/quantiles?from=${RANGE.from.toISOString()}&to=${RANGE.to.toISOString()}&step=5m&q=0.5,0.99`,
      )
    ).json()) as { points: Array<{ t: string; q: Record<string, number> }> };
    expect(q.points.length).toBe(cart.length);
    for (const p of q.points) {
      const row = cart.find((r) => Number(r.time) * 1000 === Date.parse(p.t))!;
      expect(row, p.t).toBeTruthy();
      expect(row.p50).toBeCloseTo(p.q['0.5']!, 3);
      expect(row.p99).toBeCloseTo(p.q['0.99']!, 3);
    }
  });

  it('at whole-hour intervals the panel reads the hourly rollups and still agrees with the API', async () => {
    const vars = await resolveVariables(latency);
    const sql = panel(/^Latency by series/).targets![0]!.rawSql;
    expect(sql).toContain('grafana_latency_rollup_buckets');
    const res = await runAsGrafana(latency, vars, sql, HOURLY);
    const cart = res.rows.filter((r) => r.metric === 'checkout server GET /cart');
    const series = (await (
      await api('GET', '/api/v1/series?service=checkout&op=request')
    ).json()) as { series: Array<{ id: string; name: string }> };
    const id = series.series.find((s) => s.name === 'GET /cart')!.id;
    const q = (await (
      await api(
        'GET',
        `/api/v1/series/${id}/quantiles?from=${HOURLY.from.toISOString()}&to=${HOURLY.to.toISOString()}&step=1h&q=0.5,0.99`,
      )
    ).json()) as { points: Array<{ t: string; count: number; q: Record<string, number> }> };
    expect(q.points.length).toBeGreaterThan(0);
    expect(cart.map((r) => Number(r.time) * 1000)).toEqual(q.points.map((p) => Date.parse(p.t)));
    for (const p of q.points) {
      const row = cart.find((r) => Number(r.time) * 1000 === Date.parse(p.t))!;
      expect(row.p50).toBeCloseTo(p.q['0.5']!, 3);
      expect(row.p99).toBeCloseTo(p.q['0.99']!, 3);
    }
    // Every observation counted exactly once through hours + uncompacted minutes.
    const tp = await runAsGrafana(latency, vars, panel(/Throughput/).targets![0]!.rawSql, HOURLY);
    const perHour = tp.rows
      .filter((r) => r.metric === 'checkout server GET /cart')
      .reduce((n, r) => n + r['per minute'] * 60, 0);
    expect(Math.round(perHour)).toBe(q.points.reduce((n, p) => n + p.count, 0));
  });

  it('the kernel cohort panel separates slow unmounts on 4.15 from fast ones on 4.4', async () => {
    const vars = await resolveVariables(latency);
    const res = await runAsGrafana(latency, vars, panel(/kernel version/).targets![0]!.rawSql);
    const last = (metric: string) =>
      res.rows.filter((r) => r.metric === metric).at(-1)?.p99 as number;
    expect(last('checkout /var/lib/containers @ 4.15.0-36')).toBeGreaterThan(7_800);
    expect(last('checkout /var/lib/containers @ 4.4.0-138')).toBeLessThan(26);
  });

  it('the heatmap has log-spaced buckets from microseconds to seconds', async () => {
    const vars = await resolveVariables(latency);
    const res = await runAsGrafana(latency, vars, panel(/heatmap/i).targets![0]!.rawSql);
    const buckets = [...new Set(res.rows.map((r) => Number(r.metric)))].sort((a, b) => a - b);
    expect(buckets[0]).toBeLessThan(0.1); // the 52 µs spawns
    expect(buckets.at(-1)).toBeGreaterThan(7_000); // the 8 s unmounts
    const total = res.rows.reduce((n, r) => n + Number(r.count), 0);
    const { rows } = await grafanaDb.query(`SELECT sum(count)::int AS n FROM grafana_histograms`);
    expect(total).toBe(rows[0].n);
  });

  it('deploy annotations carry the kind in tags and the versions in the text', async () => {
    const vars = await resolveVariables(latency);
    const deploys = latency.annotations.list.find((a) => a.name === 'Deploys')!;
    const res = await runAsGrafana(latency, vars, deploys.target!.rawSql);
    const kernel = res.rows.find((r) => r.tags.split(',').includes('kernel'));
    expect(kernel.text).toContain('4.4.0-138 → 4.15.0-36');
    expect(kernel.text).toContain('node-2');
    const dep = res.rows.find((r) => r.tags.split(',').includes('dependency'));
    expect(dep.text).toContain('hyper 0.12.35 → 0.13.1');
    const code = res.rows.find((r) => r.tags.split(',').includes('code'));
    expect(code.text).toMatch(
      /^checkout: code 1\.4\.1 → 1\.4\.2 \(9f2c1e0aa\) — cart: new pricing/,
    );
    expect(code.tags.split(',')).toEqual(expect.arrayContaining(['deploy', 'code', 'checkout']));
  });

  const slos = dashboards.find(([f]) => f === 'onset-slos.json')![1];

  it('the page burn-rate panel shows the cart SLO burning far above 14.4×', async () => {
    const vars = await resolveVariables(slos);
    expect(vars.slo!.values).toContain('cart latency');
    const p = allPanels(slos).find((x) => /page \(1h/.test(x.title))!;
    const res = await runAsGrafana(slos, vars, p.targets![0]!.rawSql);
    const cart = res.rows.filter((r) => r.metric === 'cart latency');
    expect(cart.at(-1)!['5m']).toBeGreaterThan(14.4);
    expect(cart.at(-1)!['1h']).toBeGreaterThan(14.4);
    // Before the step nothing was bad.
    expect(cart[0]!['5m']).toBe(0);
  });

  it('alert annotations span the firing episode with severity and type in tags', async () => {
    const vars = await resolveVariables(slos);
    const a = slos.annotations.list.find((x) => x.name === 'SLO alerts')!;
    const res = await runAsGrafana(slos, vars, a.target!.rawSql);
    const page = res.rows.find((r) => r.tags.split(',').includes('page'))!;
    expect(page.tags.split(',')).toEqual(
      expect.arrayContaining(['alert', 'slo_burn', 'firing', 'checkout']),
    );
    expect(page.text).toMatch(/burn \d+(\.\d)?× over/);
    expect(page.timeend.getTime()).toBeGreaterThanOrEqual(page.time.getTime());
  });
});
