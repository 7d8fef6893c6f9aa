/**
 * An SLO made from a regressed series during the incident must see the
 * incident: its threshold is learnt from the baseline before the onset and
 * stays below the regression's after-level (it used to suggest 15 s for a
 * 41 ms baseline). Through the API and through "New SLO from a series" on
 * the SLO list, in Chromium, against a real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression, SloSuggestion } from '@onset/contract';
import { launchChromium } from './fixtures/browser.ts';
import { detectIncidents } from './fixtures/incidents.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
let regressed: Regression;
const pageErrors: string[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const open = await detectIncidents(server);
  // The kernel incident: unmount p99 goes from tens of ms to seconds.
  regressed = open.find((r) => r.op === 'unmount')!;
  expect(regressed, 'a regression on the overlay unmounts').toBeTruthy();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('SLO suggestions from the baseline before an open regression', () => {
  it('the API learns from before the onset, says so, and stays below the after-level', async () => {
    const res = await fetch(
      `${server.url}/api/v1/series/${regressed.series_id}/slo-suggestion?objective=0.99`,
    );
    const sug = (await res.json()) as SloSuggestion;
    expect(res.status, JSON.stringify(sug)).toBe(200);
    expect(sug.basis.before_regression?.regression_id).toBe(regressed.id);
    expect(sug.basis.before_regression?.quantile).toBe('p99');
    expect(Date.parse(sug.basis.to)).toBeLessThanOrEqual(Date.parse(regressed.onset));
    expect(sug.slo.threshold_ms).toBeLessThan(regressed.after.p99_ms);
    // Learnt from the baseline: within reach of the level before the onset, not of the one after.
    expect(sug.slo.threshold_ms).toBeLessThan(regressed.before.p99_ms * 3);
    expect(sug.slo.threshold_ms).toBeGreaterThanOrEqual(regressed.before.p99_ms * 0.5);

    // POST with only the series takes the same threshold.
    const created = await fetch(`${server.url}/api/v1/slos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ series_id: regressed.series_id, objective: 0.99, window: '7d' }),
    });
    const slo = (await created.json()) as { threshold_ms: number; id: string };
    expect(created.status, JSON.stringify(slo)).toBe(201);
    expect(slo.threshold_ms).toBe(sug.slo.threshold_ms);
    await fetch(`${server.url}/api/v1/slos/${slo.id}`, { method: 'DELETE' });
  });

  it('"New SLO from a series" opens the form and creates an SLO that sees the regression', async () => {
    await page.goto(`${server.url}/slos`);
    await page.getByRole('button', { name: 'New SLO from a series' }).click();
    const form = page.locator('form.form-grid');
    await form.waitFor();
    expect(page.url()).toContain('create=new');
    await form.getByLabel('Series').selectOption(regressed.series_id);
    const threshold = form.getByLabel('Threshold (ms)');
    await expect.poll(() => threshold.inputValue()).not.toBe('');
    const suggested = Number(await threshold.inputValue());
    expect(suggested).toBeLessThan(regressed.after.p99_ms);
    await expect
      .poll(() => page.locator('.page').textContent())
      .toContain('Learnt from the baseline before the open regression');
    await form.getByRole('button', { name: 'Create SLO' }).click();
    await page.waitForURL(/\/slos\/\d+/);
    const id = /\/slos\/(\d+)/.exec(page.url())![1]!;
    const slo = (await (await fetch(`${server.url}/api/v1/slos/${id}`)).json()) as {
      threshold_ms: number;
    };
    expect(slo.threshold_ms).toBe(suggested);
    expect(pageErrors).toEqual([]);
  });
});
