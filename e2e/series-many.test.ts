/**
 * Series at any count: 5,000 series (10 services × 500 names), Chromium
 * against a real server on embedded PostgreSQL, the series sent as OTLP.
 * `GET /api/v1/series` pages and reports its total (nothing cut silently);
 * the Explorer's pickers offer every service (their options are the server's, over every
 * series), say where a picker lists fewer than there are, and find and draw the last series,
 * as its search does; the create-SLO form finds it by a server search.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Series, SeriesList } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { MANY_SERVICES, sendManySeries } from '@onset/testkit/many-series';
import { launchChromium } from './fixtures/browser.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let last: Series;

async function list(query: string): Promise<SeriesList> {
  const res = await fetch(`${server.url}/api/v1/series${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as SeriesList;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const t0 = performance.now();
  await sendManySeries(server.otlpUrl);
  console.log(
    `series-many: 5000 series sent and stored in ${Math.round(performance.now() - t0)} ms`,
  );
  const tail = await list('?offset=4999&limit=1');
  expect(tail.total).toBe(5000);
  last = tail.series[0]!;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('GET /api/v1/series past 1,000 series', () => {
  it('says how many there are, and its pages hold every one exactly once', async () => {
    const first = await list('');
    // Existing clients: the same first 1,000 as before, now with the total and where to go on.
    expect(first.series).toHaveLength(1000);
    expect(first).toMatchObject({ total: 5000, next_offset: 1000 });
    const ids = new Set<string>();
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const p: SeriesList = await list(`?limit=700&offset=${offset}`);
      for (const s of p.series) ids.add(s.id);
      offset = p.next_offset;
      pages++;
    }
    expect(pages).toBe(Math.ceil(5000 / 700));
    expect(ids.size).toBe(5000);
    expect(ids.has(last.id)).toBe(true);
    // Searched on the server: the last one by its words.
    const found = await list(`?q=${encodeURIComponent(`${last.service} ${last.name}`)}`);
    expect(found.series.map((s) => s.id)).toEqual([last.id]);
    expect(found).toMatchObject({ total: 1, next_offset: null });
    expect((await fetch(`${server.url}/api/v1/series?limit=0`)).status).toBe(400);
  });
});

describe('in the browser', () => {
  it('the Explorer finds and draws the last series by typing its name', async () => {
    await page.goto(`${server.url}/explorer?from=now-1h`);
    const input = page.getByLabel('Find a series');
    await input.fill(`${last.service} ${last.name}`);
    const row = page.locator('#series-results tbody tr').filter({ hasText: last.name });
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    await row.getByRole('link', { name: last.name }).click();
    await page.waitForURL(new RegExp(`series=${last.id}(&|$)`));
    await page.getByTestId('plot-area').first().waitFor();
  });

  it("the Explorer's pickers offer every service, say where they list fewer, and pick the last series", async () => {
    await page.goto(`${server.url}/explorer?from=now-1h`);
    const pickers = page.getByRole('form', { name: 'Choose a series' });
    const service = pickers.getByLabel('Service');
    // The last service's series are all past the list's first 1,000: it is offered all the same.
    await expect
      .poll(() => service.locator('option').allTextContents())
      .toEqual(['Any service', ...MANY_SERVICES]);
    const note = page.getByTestId('series-picker-truncated');
    await expect.poll(() => note.textContent()).toContain('first 1,000 of 5,000 names');
    await service.selectOption(last.service);
    await page.waitForURL(new RegExp(`service=${last.service}(&|$)`));
    await expect.poll(() => note.count()).toBe(0);
    await expect
      .poll(() => page.getByRole('heading', { name: /matching series: pick one/ }).textContent())
      .toContain('500 matching series');
    expect(await page.getByTestId('series-candidates-count').textContent()).toContain(
      'Showing 200 of 500',
    );
    const name = pickers.getByLabel('Name');
    await expect.poll(() => name.locator('option').count()).toBe(501);
    await name.selectOption(last.name);
    const title = page.getByRole('heading', { name: new RegExp(last.name) });
    await title.waitFor();
    await page.getByTestId('plot-area').first().waitFor();
    expect(new URL(page.url()).searchParams.get('name')).toBe(last.name);
  });

  it('the create-SLO form finds the last series by a server search and picks it', async () => {
    await page.goto(`${server.url}/slos?create=new`);
    const count = page.getByTestId('series-picker-count');
    await expect.poll(() => count.textContent()).toContain('200 of 5000 matching series shown');
    await page.getByLabel('Search', { exact: true }).fill(`${last.service} ${last.name}`);
    await expect.poll(() => count.textContent()).toBe('1 matching series');
    const select = page.locator('form.form-grid').getByLabel('Series');
    await select.selectOption(last.id);
    await page.waitForURL(new RegExp(`create=${last.id}(&|$)`));
    // Picked, it stays picked (read by its id once the search that found it is gone).
    await expect.poll(() => select.inputValue()).toBe(last.id);
    expect(await select.locator('option:checked').textContent()).toContain(last.name);
    expect(pageErrors).toEqual([]);
  });
});
