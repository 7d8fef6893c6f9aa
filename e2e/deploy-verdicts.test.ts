/**
 * Deploy verdicts in a real browser against a real server: a deploy that
 * doubled its service's latency and one that changed nothing, with real
 * traffic around each marker. The deploys page must show each deploy's
 * verdict and, for the selected one, the table of judged series with the
 * numbers the API gives; the regression the slow deploy caused links to
 * that verdict from its suspect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Deploy, Regression, Verdict } from '@onset/contract';
import { formatLatencyMs } from '@onset/core';
import { startTestServer, type TestServer } from '@onset/testkit';
import { sendDeployTraffic } from '@onset/testkit/deploy-traffic';
import { launchChromium } from './fixtures/browser.ts';

const SHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');

const MIN = 60_000;
let server: TestServer;
let browser: Browser;
let page: Page;
let slow: Deploy;
let same: Deploy;
const pageErrors: string[] = [];

async function api<T>(path: string): Promise<T> {
  const res = await fetch(server.url + path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const atMs = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
  const common = {
    apiUrl: server.url,
    otlpUrl: server.otlpUrl,
    atMs,
    beforeMin: 120,
    afterMin: 59,
  };
  [slow, same] = await Promise.all([
    sendDeployTraffic({ ...common, service: 'basket', slowdown: 2, callsPerMinute: 30, seed: 21 }),
    sendDeployTraffic({ ...common, service: 'search', callsPerMinute: 30, seed: 22 }),
  ]);
  const detect = await fetch(`${server.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(detect.status, await detect.text()).toBe(200);
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('deploy verdicts in the UI', () => {
  it("the deploys page shows each deploy's verdict, and the selected one's rows with the API's numbers", async () => {
    const v = await api<Verdict>(`/api/v1/deploys/${slow.id}/verdict`);
    expect(v.verdict).toBe('fail');
    expect((await api<Verdict>(`/api/v1/deploys/${same.id}/verdict`)).verdict).toBe('pass');

    await page.goto(`${server.url}/deploys?from=now-3h&to=now`);
    const row = (d: Deploy) =>
      page.locator(`.deploy-table tr[data-deploy-id="${d.id}"] .verdict-tag`);
    await expect.poll(() => row(slow).textContent()).toBe('fail');
    await expect.poll(() => row(same).textContent()).toBe('pass');

    // A click on the verdict opens it in full.
    await page.locator(`.deploy-table tr[data-deploy-id="${slow.id}"] .verdict-link`).click();
    const detail = page.getByTestId('verdict-detail');
    await detail.waitFor();
    expect(new URL(page.url()).searchParams.get('marker')).toBe(slow.id);
    expect(await detail.getAttribute('data-verdict')).toBe('fail');
    expect(await detail.locator('.verdict-headline').textContent()).toContain(v.reason);
    expect(v.series.length).toBeGreaterThan(0);
    for (const s of v.series) {
      const cells = await detail
        .locator(`tr[data-series-id="${s.series_id}"] td`)
        .evaluateAll((tds) => tds.map((td) => (td.textContent ?? '').trim()));
      const ms = (x: number | null) => (x === null ? '–' : formatLatencyMs(x));
      expect(cells.slice(0, 1)).toEqual([s.verdict]);
      expect(cells[1]).toContain(s.name);
      expect(cells.slice(2, 8)).toEqual([
        ms(s.baseline.p50),
        ms(s.baseline.p99),
        s.baseline.count.toLocaleString('en-US'),
        ms(s.candidate.p50),
        ms(s.candidate.p99),
        s.candidate.count.toLocaleString('en-US'),
      ]);
      expect(cells[8]).toContain(`×${s.p50_ratio.value!.toFixed(2)}`);
      expect(cells[9]).toContain(`×${s.p99_ratio.value!.toFixed(2)}`);
      expect(cells[11]).toBe(s.reason);
    }
    const failing = v.series.find((s) => s.verdict === 'fail')!;
    expect(failing.service).toBe('basket');
    expect(failing.candidate.p50! / failing.baseline.p50!).toBeGreaterThan(1.6);
    expect(pageErrors).toEqual([]);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'deploy-verdict.png'), fullPage: true });
  });

  it("the regression the slow deploy caused links to that deploy's verdict from its suspect", async () => {
    const { regressions } = await api<{ regressions: Regression[] }>(
      '/api/v1/regressions?status=open',
    );
    const r = regressions.find((x) => x.service === 'basket');
    expect(r, JSON.stringify(regressions.map((x) => [x.service, x.name]))).toBeTruthy();
    expect(String(r!.suspects[0]!.deploy_id)).toBe(slow.id);
    await page.goto(`${server.url}/regressions/${r!.id}`);
    const link = page.locator(`.suspect-list li[data-deploy-id="${slow.id}"] a.suspect-verdict`);
    await expect.poll(() => link.locator('.verdict-tag').textContent()).toBe('fail');
    await link.click();
    await page.getByTestId('verdict-detail').waitFor();
    expect(new URL(page.url()).searchParams.get('marker')).toBe(slow.id);
    expect(await page.getByTestId('verdict-detail').getAttribute('data-verdict')).toBe('fail');
  });
});
