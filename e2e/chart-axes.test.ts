/**
 * Chart axes and focus as a user meets them, in Chromium against a real server, in a Berlin
 * browser: tick labels read what they are (the heatmap's unlabelled log ticks once read
 * "0 µs"), times are 24-hour with the date and the zone (once uPlot's "7:45am" and "12/2/26"),
 * the UTC toggle moves them, and following a link in a page leaves focus on the new page's
 * main region rather than on <body>.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { AlertWithEvents, Series, Slo } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient, sendSpawnBurn } from './fixtures/api.ts';
import { canvasText, recordCanvasText } from './fixtures/canvas-text.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
let alert: AlertWithEvents;
let series: Series;
const pageErrors: string[] = [];
const api = apiClient(() => server.url);

const LATENCY = /^\d+(\.\d+)? (µs|ms|s|min|h)$/;
// uPlot draws each line of a label apart: times, and under some of them the date (with the zone first).
const TIME = /^\d\d:\d\d(:\d\d)?$/;
const DATE = /^[A-Z][a-z]{2} \d{1,2}( \S+)?$/;

/** A chart's drawn labels once its canvas is on screen: y (latency) and x (time) ticks. */
async function axes(
  testid: string,
): Promise<{ latency: string[]; time: string[]; dates: string[] }> {
  await page.getByTestId(testid).locator('canvas').first().waitFor();
  let texts: string[] = [];
  await expect
    .poll(async () => {
      texts = [...texts, ...(await canvasText(page, testid))];
      return texts.some((t) => /\d:\d\d/.test(t)) && texts.some((t) => / (µs|ms|s)$/.test(t));
    })
    .toBe(true);
  return {
    latency: texts.filter((t) => /\d (µs|ms|s|min|h)$/.test(t)),
    time: texts.filter((t) => /\d:\d\d/.test(t)),
    dates: texts.filter((t) => /^[A-Z][a-z]{2} \d/.test(t) || /^\d+\/\d+\/\d+$/.test(t)),
  };
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await sendSpawnBurn(server.otlpUrl, 'pageserver');
  await new Promise((r) => setTimeout(r, 500)); // past the counting cursor's settle time
  const slo = await api<Slo>('/api/v1/slos', {
    name: 'walredo spawn',
    service: 'pageserver',
    op: 'spawn',
    threshold_ms: 100,
    objective: 0.99,
    window: '28d',
    alert_tiers: { page_6h: false, ticket_1d: false, ticket_3d: false },
  });
  await api('/api/v1/slos/evaluate', {});
  const alerts = await api<{ alerts: AlertWithEvents[] }>(`/api/v1/alerts?slo_id=${slo.id}`);
  expect(alerts.alerts).toHaveLength(1);
  alert = alerts.alerts[0]!;
  series = (await api<{ series: Series[] }>('/api/v1/series?service=pageserver')).series[0]!;
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId: 'Europe/Berlin',
  });
  await recordCanvasText(context);
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('chart axes say what they show', () => {
  it('the explorer heatmap and quantiles label latency ticks with units or leave them blank, never "0 µs"', async () => {
    await page.goto(`${server.url}/explorer?series=${series.id}`);
    for (const chart of ['chart-heatmap', 'chart-quantiles']) {
      const { latency } = await axes(chart);
      expect(latency.length, `${chart} has latency ticks`).toBeGreaterThan(1);
      for (const t of latency) expect(t, chart).toMatch(LATENCY);
      expect(latency, chart).not.toContain('0 µs');
    }
  });

  it('the alert chart: 24-hour times, the date and the zone under the first tick; the UTC toggle moves them', async () => {
    await page.goto(`${server.url}/alerts/${alert.id}`);
    const local = await axes('chart-alert');
    expect(local.time.length).toBeGreaterThan(2);
    for (const t of local.time) expect(t).toMatch(TIME);
    for (const t of local.latency) expect(t).toMatch(LATENCY);
    // Berlin in December is UTC+1, named the way every other time on the page names it.
    expect(local.dates.length).toBeGreaterThan(0);
    for (const d of local.dates) expect(d).toMatch(DATE);
    expect(local.dates[0]).toMatch(/ (GMT\+1|CET|UTC\+1)$/);

    await page.getByRole('button', { name: 'UTC' }).click();
    const utc = await axes('chart-alert');
    expect(utc.dates[0]).toMatch(/ UTC$/);
    for (const t of utc.time) expect(t).toMatch(TIME);
    // The same first tick an hour earlier on the clock (ticks sit at the same instants).
    const hm = (t: string) => t.slice(0, 5).split(':').map(Number) as [number, number];
    const [lh, lm] = hm(local.time[0]!);
    const [uh, um] = hm(utc.time[0]!);
    expect(((lh - uh + 24) % 24) * 60 + lm - um).toBe(60);
    await page.getByRole('button', { name: 'UTC' }).click();
  });
});

describe('focus after following a link', () => {
  it('lands on the new page’s main region, not <body>', async () => {
    await page.goto(`${server.url}/alerts`);
    const link = page.getByRole('link', { name: alert.text.title });
    await link.focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('alert-title').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    // The next Tab goes into the page, not back to the skip link at the top.
    await page.keyboard.press('Tab');
    const inPage = await page.evaluate(
      () => !!document.activeElement?.closest('main') && document.activeElement !== document.body,
    );
    expect(inPage).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
