/**
 * The explorer's heatmap on young and sparse series: a series with a single
 * minute of calls, and one with a half-hour gap between two minutes, both
 * whole range and one host. Each draws its cells (the canvas shows the heat
 * colour) with no page error; it once threw `RangeError: Invalid array length`.
 * Chromium against a real server on embedded PostgreSQL, spans sent as OTLP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import type { HeatmapResponse, SeriesList } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const MIN = 60_000;

/** `count` spans of `name` in each of the given minutes ago, on one host. */
async function send(name: string, host: string, minutesAgo: number[], count = 20): Promise<void> {
  const now = Math.floor(Date.now() / MIN) * MIN;
  const spans = minutesAgo.flatMap((m) =>
    Array.from({ length: count }, (_, i) => {
      const start = BigInt(now - m * MIN + i * 1000) * 1_000_000n;
      const durUs = 3_000 + i * 150;
      return {
        traceId: randomBytes(16).toString('hex'),
        spanId: randomBytes(8).toString('hex'),
        name,
        kind: 2,
        startTimeUnixNano: start.toString(),
        endTimeUnixNano: (start + BigInt(durUs) * 1000n).toString(),
      };
    }),
  );
  const res = await fetch(`${server.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: 'newcomer' } },
              { key: 'host.name', value: { stringValue: host } },
            ],
          },
          scopeSpans: [{ spans }],
        },
      ],
    }),
  });
  expect(res.status, await res.text()).toBe(200);
}

async function seriesId(name: string): Promise<string> {
  const list = (await (await fetch(`${server.url}/api/v1/series?limit=100`)).json()) as SeriesList;
  const s = list.series.find((x) => x.name === name);
  if (!s) throw new Error(`no series ${name} in ${JSON.stringify(list).slice(0, 400)}`);
  return s.id;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await send('GET /young', 'new-1', [2]);
  await send('GET /gappy', 'new-1', [40, 5]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${e.name}: ${e.message}`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** How many canvas pixels of the heatmap carry its cell colour (any alpha). */
async function heatPixels(): Promise<number> {
  const chart = page.getByTestId('chart-heatmap');
  await chart.locator('canvas').first().waitFor();
  return chart
    .locator('canvas')
    .first()
    .evaluate((c: HTMLCanvasElement) => {
      const ctx = c.getContext('2d')!;
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4)
        if (d[i + 3]! > 0 && d[i]! > 150 && d[i + 2]! < 120) n++;
      return n;
    });
}

describe('the explorer heatmap on young and sparse series', () => {
  for (const [name, minutes] of [
    ['GET /young', 1],
    ['GET /gappy', 2],
  ] as const)
    for (const host of ['', 'new-1'])
      it(`${name}${host ? ` on host ${host}` : ''}: draws its ${minutes} minute(s), no error`, async () => {
        const id = await seriesId(name);
        const api = (await (
          await fetch(
            `${server.url}/api/v1/series/${id}/heatmap?from=now-1h${host ? `&host=${host}` : ''}`,
          )
        ).json()) as HeatmapResponse;
        const calls = api.points.reduce((n, p) => n + p.count, 0);
        expect(calls).toBe(20 * minutes);
        pageErrors.length = 0;
        await page.goto(
          `${server.url}/explorer?series=${id}&from=now-1h${host ? `&host=${host}` : ''}`,
        );
        await page.getByTestId('chart-heatmap').waitFor();
        // The legend's total equals the API's, and the cells are drawn.
        await expect
          .poll(() => page.getByTestId('chart-heatmap').getByTestId('chart-summary').textContent())
          .toMatch(new RegExp(`^${calls} calls from`));
        await expect.poll(heatPixels).toBeGreaterThan(0);
        expect(pageErrors).toEqual([]);
      });
});
