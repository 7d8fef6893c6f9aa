/**
 * The Overview tells when the cardinality guard dropped data: a server with
 * a per-service limit of 5 series receives 40 distinct span names, and the
 * notice in Chromium shows the drops the API counts, the service and a
 * refused name. A server that dropped nothing shows no notice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { CardinalityStatus } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';

let limited: TestServer;
let calm: TestServer;
let browser: Browser;

const hex = (bytes: number, n: number) => n.toString(16).padStart(bytes * 2, '0');

async function sendNames(server: TestServer, names: string[]): Promise<void> {
  const start = (Date.now() - 60_000) * 1e6;
  const res = await fetch(`${server.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'catalog' } }] },
          scopeSpans: [
            {
              spans: names.map((name, i) => ({
                traceId: hex(16, i + 1),
                spanId: hex(8, i + 1),
                name,
                kind: 2,
                startTimeUnixNano: String(start + i * 1e6),
                endTimeUnixNano: String(start + i * 1e6 + 3e6),
              })),
            },
          ],
        },
      ],
    }),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  [limited, calm, browser] = await Promise.all([
    startTestServer({ env: { ONSET_MAX_SERIES_PER_SERVICE: '5' } }),
    startTestServer(),
    launchChromium(),
  ]);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  await sendNames(
    limited,
    Array.from(
      { length: 40 },
      (_, i) => `GET /shelf-${letters[i % 26]}${letters[Math.floor(i / 26)]}`,
    ),
  );
  await sendNames(calm, ['GET /ok', 'GET /users/1', 'GET /users/2']);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await limited?.close();
  await calm?.close();
});

describe('cardinality notice on the Overview', () => {
  it('shows the drops the API reports, the service and a refused name', async () => {
    const status = (await (
      await fetch(`${limited.url}/api/v1/limits`)
    ).json()) as CardinalityStatus;
    expect(status.dropped.series.service_limit).toBe(35);
    const page = await browser.newPage();
    await page.goto(`${limited.url}/`);
    const notice = page.getByRole('status', { name: 'Cardinality limits' });
    await notice.waitFor();
    const text = (await notice.textContent()) ?? '';
    expect(text).toContain('Cardinality limit reached');
    expect(text).toContain('35 spans and data points were dropped');
    expect(text).toContain('catalog');
    expect(text).toContain('5 series (limit 5)');
    expect(text).toContain(status.services[0]!.examples[0]!);
    await page.close();
  });

  it('is absent when nothing was dropped', async () => {
    const page = await browser.newPage();
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/v1/limits'));
    await page.goto(`${calm.url}/`);
    expect((await answered).status()).toBe(200);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    // The answer is drawn in the same render as the rest of the page's data.
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('status', { name: 'Cardinality limits' }).count()).toBe(0);
    await page.close();
  });
});
