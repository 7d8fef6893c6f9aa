/**
 * The Explorer's "Changes looking back" panel shows the server's retrospective segmentation
 * (GET /api/v1/series/{id}/segments) as the API answers it, in real Chromium against a real
 * server on embedded PostgreSQL, spans sent as OTLP: a route whose p50 moved ×1.15 (a shift, under
 * the ×1.2 smallest step that opens a regression) lists that shift with the API's onset, ratio and
 * levels, and the detection pass opens nothing for it; a steady route shows "No change"; a window
 * over a day is not asked for and says to zoom in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Regression, SegmentsResponse, SeriesList } from '@onset/contract';
import { formatLatencyMs, formatRatio } from '@onset/core';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Batch, post } from '@onset/testkit/incidents';
import { mulberry32 } from '@onset/testkit/random';
import { launchChromium } from './fixtures/browser.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
const START = END - 120 * MIN;
const CHANGE = END - 40 * MIN;
let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const rand = mulberry32(30);
  const b = new Batch();
  const shop = { 'service.name': 'shop', 'host.name': 'shop-1' };
  for (let m = START; m < END; m += MIN)
    for (let k = 0; k < 20; k++) {
      // Lognormal around the level, sd 3 % of it: a clean series, as the shift needs.
      const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
      const jitter = Math.exp(0.03 * z);
      const attrs = { 'http.request.method': 'GET' };
      b.span(shop, 'GET /shifted', 'server', m + k * 2900, (m >= CHANGE ? 11.5 : 10) * jitter, {
        ...attrs,
        'http.route': '/shifted',
      });
      b.span(shop, 'GET /steady', 'server', m + k * 2900 + 7, 10 * jitter, {
        ...attrs,
        'http.route': '/steady',
      });
    }
  await post(`${server.otlpUrl}/v1/traces`, b.body());
  const pass = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ upto: new Date(END).toISOString() }),
  });
  expect(pass.status, await pass.text()).toBe(200);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${e.name}: ${e.message}`));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function seriesId(name: string): Promise<string> {
  const list = (await (
    await fetch(`${server.url}/api/v1/series?service=shop&limit=100`)
  ).json()) as SeriesList;
  const s = list.series.find((x) => x.name === name);
  if (!s) throw new Error(`no series ${name}: ${list.series.map((x) => x.name).join(', ')}`);
  return s.id;
}

const RANGE = 'from=now-3h&to=now';

describe('changes looking back in the Explorer', () => {
  it('lists the ×1.15 shift as the API answers it, and no regression opened for it', async () => {
    const id = await seriesId('GET /shifted');
    const api = (await (
      await fetch(`${server.url}/api/v1/series/${id}/segments?${RANGE}`)
    ).json()) as SegmentsResponse;
    const p50 = api.changes.filter((c) => c.metric === 'p50');
    expect(p50, JSON.stringify(api.changes)).toHaveLength(1);
    expect(p50[0]).toMatchObject({ direction: 'regression', kind: 'shift' });
    expect(Math.abs(Date.parse(p50[0]!.onset) - CHANGE)).toBeLessThanOrEqual(2 * MIN);
    const regressions = (await (
      await fetch(`${server.url}/api/v1/regressions?series_id=${id}`)
    ).json()) as { regressions: Regression[] };
    expect(regressions.regressions).toEqual([]);

    await page.goto(`${server.url}/explorer?series=${id}&${RANGE}`);
    const rows = page.getByTestId('segment-change');
    await page.getByTestId('segment-changes').waitFor({ timeout: 30_000 });
    expect(await rows.count()).toBe(api.changes.length);
    for (const [i, c] of api.changes.entries()) {
      const row = rows.nth(i);
      expect(await row.getAttribute('data-onset')).toBe(c.onset);
      const cells = (await row.locator('td').allInnerTexts()).map((t) => t.trim());
      expect(cells.slice(1)).toEqual([
        c.metric,
        `${c.direction === 'improvement' ? 'Shift down' : 'Shift up'}`.replace(
          'Shift',
          c.kind === 'step' ? 'Step' : 'Shift',
        ),
        formatRatio(c.ratio),
        `${formatLatencyMs(c.before_ms)} → ${formatLatencyMs(c.after_ms)}`,
      ]);
    }
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('says there is no change on a steady route, and asks to zoom in past a day', async () => {
    const id = await seriesId('GET /steady');
    const api = (await (
      await fetch(`${server.url}/api/v1/series/${id}/segments?${RANGE}`)
    ).json()) as SegmentsResponse;
    expect(api.changes).toEqual([]);
    await page.goto(`${server.url}/explorer?series=${id}&${RANGE}`);
    await page.getByText('No change in this window').waitFor({ timeout: 30_000 });
    expect(await page.getByText(`${api.points} minutes with data read.`).count()).toBe(1);

    await page.goto(`${server.url}/explorer?series=${id}&from=now-2d&to=now`);
    await page.getByText('Zoom to a day or less').waitFor({ timeout: 30_000 });
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
