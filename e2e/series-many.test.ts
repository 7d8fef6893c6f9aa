/**
 * Series at any count: 5,000 series (10 services × 500 names), Chromium
 * against a real server on embedded PostgreSQL, the series sent as OTLP.
 * `GET /api/v1/series` pages and reports its total (nothing cut silently);
 * the Explorer says its pickers hold fewer than there are and finds and
 * draws the last series; the create-SLO form finds it by a server search.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import type { Series, SeriesList } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let last: Series;

// Lower-case words (no digits, which route templating would fold): 25 × 20 = 500 names a service.
const A =
  'amber basil cedar dune ember fern grove heath iris juniper kelp lotus moss nectar olive pine quartz reed sage thyme umber vale willow yarrow zinnia'.split(
    ' ',
  );
const B =
  'apple brook cliff dawn elk frost glen hill isle jay knoll lake marsh north oak pond quail ridge stone trail'.split(
    ' ',
  );
const SERVICES = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet'.split(' ');

async function sendSeries(otlpUrl: string): Promise<void> {
  const now = Date.now();
  for (const service of SERVICES) {
    const spans = [];
    for (const a of A)
      for (const b of B) {
        const start: bigint = BigInt(now - 5 * 60_000 + spans.length * 10) * 1_000_000n;
        spans.push({
          traceId: randomBytes(16).toString('hex'),
          spanId: randomBytes(8).toString('hex'),
          name: `${a} ${b}`,
          kind: 2,
          startTimeUnixNano: start.toString(),
          endTimeUnixNano: (start + 3_000_000n).toString(),
        });
      }
    const res = await fetch(`${otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: {
              attributes: [
                { key: 'service.name', value: { stringValue: service } },
                { key: 'host.name', value: { stringValue: `${service}-host` } },
              ],
            },
            scopeSpans: [{ spans }],
          },
        ],
      }),
    });
    expect(res.status, await res.text()).toBe(200);
  }
}

async function list(query: string): Promise<SeriesList> {
  const res = await fetch(`${server.url}/api/v1/series${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as SeriesList;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await sendSeries(server.otlpUrl);
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
  it('the Explorer says its pickers hold 1,000 of 5,000, and finds and draws the last series', async () => {
    await page.goto(`${server.url}/explorer?from=now-1h`);
    const note = page.getByTestId('series-list-truncated');
    await note.waitFor();
    expect(await note.textContent()).toContain('first 1,000 of 5,000 series');
    const input = page.getByLabel('Find a series');
    await input.fill(`${last.service} ${last.name}`);
    const row = page.locator('#series-results tbody tr').filter({ hasText: last.name });
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    await row.getByRole('link', { name: last.name }).click();
    await page.waitForURL(new RegExp(`series=${last.id}(&|$)`));
    await page.getByTestId('plot-area').first().waitFor();
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
