/**
 * Truth in the UI: the alert thresholds the SLO page draws on its burn-rate
 * chart, and states in its tier table, are the factors the server alerts at
 * (status.tiers[].factor), for a 28-day and a 7-day SLO, in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Batch, post } from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

interface Tier {
  name: string;
  long: string;
  enabled: boolean;
  factor: number;
}

/** 20 spawn spans a minute over the last 30 minutes, a tenth of them slow, as OTLP JSON. */
async function sendTraffic(otlpUrl: string): Promise<void> {
  const now = Date.now();
  const batch = new Batch();
  const resource = { 'service.name': 'pageserver', 'host.name': 'node-1' };
  for (let i = 0; i < 600; i++)
    batch.span(
      resource,
      'spawn',
      'internal',
      now - 30 * 60_000 + i * 3000,
      i % 10 === 0 ? 400 : 20,
      {
        'process.executable.name': 'postgres',
      },
    );
  await post(`${otlpUrl}/v1/traces`, batch.body());
}

async function createSlo(window: string): Promise<{ id: string; tiers: Tier[] }> {
  const res = await fetch(`${server.url}/api/v1/slos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: `walredo spawn ${window}`,
      service: 'pageserver',
      op: 'spawn',
      threshold_ms: 100,
      objective: 0.99,
      window,
    }),
  });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  // The status as an API client reads it, the same answer the alerts are decided from.
  const slo = (await (await fetch(`${server.url}/api/v1/slos/${body.id}`)).json()) as {
    status: { tiers: Tier[] };
  };
  return { id: body.id, tiers: slo.status.tiers };
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await sendTraffic(server.otlpUrl);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** What the SLO page shows: the burn chart's drawn thresholds and the tier table's "fires at" factors. */
async function drawnThresholds(
  id: string,
): Promise<{ chart: number[]; table: number[]; text: string }> {
  await page.goto(`${server.url}/slos/${id}?from=now-6h&to=now`);
  const chart = page.getByTestId('chart-burn');
  await chart.locator('canvas').waitFor();
  const legend = chart.locator('.legend-threshold');
  await legend.first().waitFor();
  const chartValues = (await legend.evaluateAll((els) =>
    els.map((e) => Number(e.getAttribute('data-threshold'))),
  )) as number[];
  const table = (await page
    .locator('td[data-factor]')
    .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-factor'))))) as number[];
  return { chart: chartValues, table, text: (await chart.textContent()) ?? '' };
}

describe('SLO thresholds in the browser equal the server tiers', () => {
  it('a 28-day SLO: 13.44× / 5.6× / 2.8× / 1×, never the 30-day 14.4× / 6× / 3×', async () => {
    const slo = await createSlo('28d');
    const factors = slo.tiers.filter((t) => t.enabled).map((t) => t.factor);
    expect(factors).toEqual([13.44, 5.6, 2.8, 1]);
    const shown = await drawnThresholds(slo.id);
    expect(shown.chart).toEqual(factors);
    expect(shown.table).toEqual(slo.tiers.map((t) => t.factor));
    expect(shown.text).toContain('13.44× page (1h)');
    expect(shown.text).not.toMatch(/(^|[^\d.])(14\.4× page|6× page|3× ticket)/);
  });

  it('a 7-day SLO: 3.36× / 1.4× / 1× / 1×', async () => {
    const slo = await createSlo('7d');
    const factors = slo.tiers.filter((t) => t.enabled).map((t) => t.factor);
    expect(factors).toEqual([3.36, 1.4, 1, 1]);
    const shown = await drawnThresholds(slo.id);
    expect(shown.chart).toEqual(factors);
    expect(shown.table).toEqual(slo.tiers.map((t) => t.factor));
    expect(shown.text).toContain('3.36× page (1h)');
    expect(pageErrors).toEqual([]);
  });
});
