/**
 * Cohort- and version-aware charts (issue 29 part 4) in Chromium against one real server
 * holding three incidents at once: the kernel rollout on two of four containerd nodes, the
 * urlite hyper bump behind checkout, and payments 2.4.0 on one host of three (the whole
 * series' p50 barely moves while the slow cohort's is ×13). What is drawn is read back — the
 * level bands' labels and places, the legend's values, the words of the chart summary, the
 * canvas's tick labels, the example calls' rows — and each number is checked against the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { formatLatencyMs } from '@onset/core';
import type {
  AlertList,
  Evidence,
  QuantileColumns,
  Regression,
  RegressionCohortLines,
  Series,
  SeriesGroups,
} from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  incidentTimes,
  LIVE_WINDOW,
  ROLLOUT,
  sendIncidents,
  sendVersionRollout,
} from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient } from './fixtures/api.ts';
import { canvasText, recordCanvasText } from './fixtures/canvas-text.ts';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
let kernel: Regression;
let payments: Regression;
const api = apiClient(() => server.url);
const SHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const t = incidentTimes(Date.now(), LIVE_WINDOW);
  await sendIncidents({ apiUrl: server.url, otlpUrl: server.otlpUrl, times: t });
  await sendVersionRollout({ apiUrl: server.url, otlpUrl: server.otlpUrl, times: t });
  await api('/api/v1/detect', {});
  const open = (await api<{ regressions: Regression[] }>('/api/v1/regressions?status=open'))
    .regressions;
  kernel = open.find((r) => r.op === 'unmount')!;
  payments = open.find((r) => r.service === ROLLOUT.service)!;
  expect(kernel?.cohort?.attribute, 'the kernel regression has its os.version cohort').toBe(
    'os.version',
  );
  expect(payments?.cohort?.attribute, 'payments has its service.version cohort').toBe(
    'service.version',
  );
  expect(
    open.some((r) => r.name === 'GET /lookup'),
    'the edge incident is there too',
  ).toBe(true);
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await recordCanvasText(context);
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 180_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

/** The answer the page got for a request whose URL contains `part`, parsed. */
async function answerOf<T>(p: Page, part: string, go: () => Promise<unknown>): Promise<T> {
  const [res] = await Promise.all([
    p.waitForResponse((r: Response) => r.url().includes(part) && r.status() === 200, {
      timeout: 30_000,
    }),
    go(),
  ]);
  return (await res.json()) as T;
}

const level = (who: string, when: string, l: { p50_ms: number; p99_ms: number }) =>
  `${who} hosts ${when}: p50 ${formatLatencyMs(l.p50_ms)} · p99 ${formatLatencyMs(l.p99_ms)}`;

/** The chart's words for a line, as chartSummary.ts writes them from the values drawn. */
function lineWords(label: string, values: number[]): string {
  const f = formatLatencyMs;
  return `${label}: first ${f(values[0]!)}, last ${f(values[values.length - 1]!)}, lowest ${f(Math.min(...values))}, highest ${f(Math.max(...values))}.`;
}

/** Everything a cohort chart shows, checked against the cohort read the page made and the regression. */
async function checkCohortChart(
  p: Page,
  chartId: string,
  r: Regression,
  lines: RegressionCohortLines,
): Promise<void> {
  // The page's answer is the API's: the same window asked again answers the same numbers.
  const again = await api<RegressionCohortLines>(
    `/api/v1/regressions/${r.id}/cohort?from=${encodeURIComponent(lines.from)}&to=${encodeURIComponent(lines.to)}&q=0.5,0.99`,
  );
  expect(again).toEqual(lines);
  expect(lines.attribute).toBe(r.cohort!.attribute);
  const [slow, fast] = lines.sides;
  expect(slow!.hosts).toEqual(r.cohort!.slow_hosts);
  expect(fast!.hosts).toEqual(r.cohort!.fast_hosts);

  const chart = p.getByTestId(`chart-${chartId}`);
  await chart.locator('canvas').waitFor();
  // Four bands, each the API's level of its side: the slow side's are the regression's own.
  const lv = r.cohort!.levels!;
  // (its count is the 2 h attribution window's; the regression's own counts everything since)
  expect([lv.slow.after.p50_ms, lv.slow.after.p99_ms]).toEqual([r.after.p50_ms, r.after.p99_ms]);
  const band = (key: string) => chart.getByTestId(`band-${key}`);
  await band('after').waitFor();
  expect(await band('before').getAttribute('title')).toBe(level('slow', 'before', lv.slow.before));
  expect(await band('after').getAttribute('title')).toBe(level('slow', 'after', lv.slow.after));
  expect(await band('fast-before').getAttribute('title')).toBe(
    level('fast', 'before', lv.fast.before),
  );
  expect(await band('fast-after').getAttribute('title')).toBe(
    level('fast', 'after', lv.fast.after),
  );
  // Each band is over the line it describes: after the onset the slow band sits far above the
  // fast one (log scale), before it the two sides are level.
  const slowAfter = (await band('after').boundingBox())!;
  const fastAfter = (await band('fast-after').boundingBox())!;
  expect(slowAfter.y + slowAfter.height).toBeLessThan(fastAfter.y - 50);
  const slowBefore = (await band('before').boundingBox())!;
  const fastBefore = (await band('fast-before').boundingBox())!;
  expect(Math.abs(slowBefore.y - fastBefore.y)).toBeLessThan(40);

  // The lines drawn are the API's columns: the chart's words for each, and the legend's last values.
  const summary = (await chart.getByTestId('chart-summary').textContent()) ?? '';
  for (const s of lines.sides)
    for (const [q, name] of [
      ['0.5', 'p50'],
      ['0.99', 'p99'],
    ] as const) {
      const values = s.columns.q[q]!.filter((v) => v > 0);
      expect(summary).toContain(lineWords(`${s.side} ${name}`, values));
      const legend = chart.locator('.legend-item', { hasText: `${s.side} ${name}` });
      expect(await legend.locator('b').textContent()).toBe(
        formatLatencyMs(values[values.length - 1]!),
      );
    }
  // The note names each side's values and hosts as the API does.
  const note = p.getByTestId('cohort-split-note').first();
  expect(await note.locator('[data-side="slow"]').textContent()).toContain(
    r.cohort!.slow.join(', '),
  );
  expect(await note.locator('[data-side="fast"]').textContent()).toContain(
    r.cohort!.fast.join(', '),
  );
  // The axis reads the slow side's seconds and the fast side's milliseconds.
  const ticks = await canvasText(p, `chart-${chartId}`);
  expect(ticks.some((t) => / s$/.test(t))).toBe(true);
  expect(ticks.some((t) => / ms$/.test(t))).toBe(true);
}

describe('a cohort regression draws its slow hosts and the fast rest apart', () => {
  it('the kernel rollout: the regression chart has a line and levels per side, equal to the API', async () => {
    const lines = await answerOf<RegressionCohortLines>(
      page,
      `/regressions/${kernel.id}/cohort`,
      () => page.goto(`${server.url}/regressions/${kernel.id}`),
    );
    await checkCohortChart(page, 'regression', kernel, lines);
  });

  it('payments 2.4.0 on one host of three: the after level is over the slow line, not the whole series near 25 ms', async () => {
    const [lines, whole, split] = await Promise.all([
      answerOf<RegressionCohortLines>(page, `/regressions/${payments.id}/cohort`, () =>
        page.goto(`${server.url}/regressions/${payments.id}`),
      ),
      page
        // The whole series' read.
        .waitForResponse((r) => {
          const u = new URL(r.url());
          return (
            u.pathname === `/api/v1/series/${payments.series_id}/quantiles` &&
            !u.searchParams.has('attribute') &&
            !u.searchParams.has('host')
          );
        })
        .then((r) => r.json() as Promise<QuantileColumns & { columns: QuantileColumns }>),
      // The cohort split panel's one grouped read.
      page
        .waitForResponse((r) => r.url().includes(`/series/${payments.series_id}/groups`))
        .then((r) => r.json() as Promise<SeriesGroups>),
    ]);
    await checkCohortChart(page, 'regression', payments, lines);
    // The cohort split panel below: one line per service.version, as the grouped read answered.
    expect(split.by).toBe('service.version');
    const panel = page.getByTestId('cohort-panel');
    await panel.getByTestId('chart-cohorts').locator('canvas').waitFor();
    const words = (await panel.getByTestId('chart-summary').textContent()) ?? '';
    for (const grp of split.groups)
      expect(words).toContain(lineWords(grp.value!, grp.columns.q['0.5']!));
    expect(await panel.locator('[data-cohort="2.4.0"] .slow-tag').count()).toBe(1);
    expect(await panel.locator('[data-cohort="2.3.0"] .slow-tag').count()).toBe(0);
    expect(await panel.locator('[data-cohort="2.4.0"]').textContent()).toContain(ROLLOUT.rolled);
    // The whole series stays near the fast hosts (two of three), faint and dashed for context.
    const summary = (await page
      .getByTestId('chart-regression')
      .getByTestId('chart-summary')
      .textContent())!;
    const all = whole.columns.q['0.5']!;
    expect(summary).toContain(lineWords('all hosts p50', all));
    const median = [...all].sort((a, b) => a - b)[Math.floor(all.length / 2)]!;
    expect(median).toBeLessThan(40);
    expect(payments.after.p50_ms).toBeGreaterThan(290);
    await page.getByTestId('chart-regression').screenshot({ path: `${SHOTS}/cohort-payments.png` });
  });

  it("the example calls after the onset are the slow host's, the fast hosts' apart, as the API lists them", async () => {
    const e = await api<Evidence>(`/api/v1/regressions/${payments.id}/evidence`);
    const table = page.getByTestId('exemplars');
    await table.waitFor();
    const rows = async (side: string) =>
      table
        .locator(`tbody[data-side="${side}"] tr`)
        .evaluateAll((trs) =>
          trs
            .slice(1)
            .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
        );
    const ms = (x: number) =>
      x >= 100
        ? `${x.toFixed(0)} ms`
        : x >= 1
          ? `${x.toFixed(1)} ms`
          : `${(x * 1000).toFixed(0)} µs`;
    const after = await rows('after');
    expect(after.map((r) => [r[0], r[1], r[3]])).toEqual(
      e.exemplars.after.map((s) => [s.role, ms(s.duration_ms), s.host]),
    );
    expect(new Set(after.map((r) => r[3]))).toEqual(new Set([ROLLOUT.rolled]));
    const typical = e.exemplars.after.filter((s) => s.role === 'typical');
    expect(typical.length).toBeGreaterThan(0);
    for (const s of typical) expect(s.duration_ms).toBeGreaterThan(290);
    const fast = await rows('fast_after');
    expect(fast.map((r) => [r[0], r[1], r[3]])).toEqual(
      e.exemplars.cohort!.fast_after.map((s) => [s.role, ms(s.duration_ms), s.host]),
    );
    for (const r of fast) expect(payments.cohort!.fast_hosts).toContain(r[3]);
    expect(await table.locator('tbody[data-side="fast_after"] th').textContent()).toContain(
      payments.cohort!.fast_hosts.join(', '),
    );
  });

  it('the alert page of the kernel regression draws the same split', async () => {
    const alerts = await api<AlertList>(`/api/v1/alerts?regression_id=${kernel.id}`);
    expect(alerts.alerts.length, 'the kernel regression paged').toBeGreaterThan(0);
    const lines = await answerOf<RegressionCohortLines>(
      page,
      `/regressions/${kernel.id}/cohort`,
      () => page.goto(`${server.url}/alerts/${alerts.alerts[0]!.id}`),
    );
    await checkCohortChart(page, 'alert', kernel, lines);
  });
});

describe('the Explorer groups any series, one line each', () => {
  const checkGroups = async (series: Series, by: string, expected: string[], host?: string) => {
    const hostQuery = host ? `&host=${encodeURIComponent(host)}` : '';
    const g = await answerOf<SeriesGroups>(page, `/series/${series.id}/groups`, () =>
      page.goto(
        `${server.url}/explorer?series=${series.id}&group=${encodeURIComponent(by)}${hostQuery}`,
      ),
    );
    const again = await api<SeriesGroups>(
      `/api/v1/series/${series.id}/groups?by=${encodeURIComponent(by)}&from=${encodeURIComponent(g.from)}&to=${encodeURIComponent(g.to)}&q=0.5,0.99&limit=8${hostQuery}`,
    );
    expect(again).toEqual(g);
    expect(g.host).toBe(host ?? null);
    expect(g.groups.map((x) => x.value).sort()).toEqual(expected);
    const panel = page.getByTestId('group-by-panel');
    await panel.waitFor();
    expect(await panel.getAttribute('data-by')).toBe(by);
    expect(await panel.getAttribute('data-host')).toBe(host ?? '');
    expect(await page.locator('#group-by').inputValue()).toBe(by);
    for (const x of g.groups) {
      const li = panel.locator(`li[data-group="${x.value ?? ''}"]`);
      expect(await li.getByTestId('group-calls').textContent()).toBe(
        x.count.toLocaleString('en-US'),
      );
      const p50 = x.columns.q['0.5']!;
      const p99 = x.columns.q['0.99']!;
      expect(await li.getByTestId('group-p50').textContent()).toBe(formatLatencyMs(p50.at(-1)!));
      expect(await li.getByTestId('group-p99').textContent()).toBe(formatLatencyMs(p99.at(-1)!));
    }
    const chart = page.getByTestId('chart-groups');
    await chart.locator('canvas').waitFor();
    const summary = (await chart.getByTestId('chart-summary').textContent()) ?? '';
    for (const x of g.groups)
      expect(summary).toContain(lineWords(x.value ?? '(not reported)', x.columns.q['0.5']!));
    return g;
  };
  const seriesOf = async (service: string, op: string, view: string) =>
    (await api<{ series: Series[] }>(`/api/v1/series?service=${service}&op=${op}&view=${view}`))
      .series[0]!;

  it('payments by service.version: 2.3.0 and 2.4.0, the new version ×10 slower, as the API says', async () => {
    const s = await seriesOf(ROLLOUT.service, 'request', 'server');
    const g = await checkGroups(s, 'service.version', ['2.3.0', '2.4.0']);
    const v24 = g.groups.find((x) => x.value === '2.4.0')!;
    const v23 = g.groups.find((x) => x.value === '2.3.0')!;
    expect(v24.hosts).toEqual([ROLLOUT.rolled]);
    expect(v24.columns.q['0.5']!.at(-1)! / v23.columns.q['0.5']!.at(-1)!).toBeGreaterThan(8);
    // With the host filter set, the groups are that host's calls only: a host that kept 2.3.0.
    const other = ROLLOUT.hosts.find((h) => h !== ROLLOUT.rolled)!;
    const kept = await checkGroups(s, 'service.version', ['2.3.0'], other);
    expect(kept.groups[0]!.hosts).toEqual([other]);
    expect(kept.groups[0]!.count).toBeLessThan(v23.count);
  });

  it('containerd by os.version and by host; urlite by dependency.hyper (a cohort attribute) from the picker', async () => {
    const s = await seriesOf('containerd', 'unmount', 'internal');
    await checkGroups(s, 'os.version', ['4.15.0-36', '4.4.0-138']);
    await checkGroups(s, 'host', ['node-1', 'node-2', 'node-3', 'node-4']);
    const u = await seriesOf('urlite', 'request', 'server');
    await page.goto(`${server.url}/explorer?series=${u.id}`);
    const picker = page.locator('#group-by');
    await expect
      .poll(
        () => picker.locator('option').evaluateAll((os) => os.map((o) => o.getAttribute('value'))),
        {
          timeout: 15_000,
        },
      )
      .toContain('dependency.hyper');
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().includes(`/series/${u.id}/groups`) && r.status() === 200),
      picker.selectOption('dependency.hyper'),
    ]);
    const g = (await res.json()) as SeriesGroups;
    expect(g.groups.map((x) => x.value).sort()).toEqual(['0.12.35', '0.13.1']);
    await page.getByTestId('chart-groups').locator('canvas').waitFor();
    expect(new URL(page.url()).searchParams.get('group')).toBe('dependency.hyper');
    await page.getByTestId('group-by-panel').screenshot({ path: `${SHOTS}/explorer-group-by.png` });
  });

  it('no page error on any of it', () => {
    expect(pageErrors).toEqual([]);
  });
});
