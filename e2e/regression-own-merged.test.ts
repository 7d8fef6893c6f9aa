/**
 * The regression page says what the API says of Onset's own noise and of merges (docs/regressions.md
 * "Onset's own noise", "Whatever the order"), in real Chromium: a step on the agent's mount probe
 * is marked "Onset's own: agent probe" and has no alert; one incident found as two regressions a
 * pass apart (the callee's server view, then the caller's route, linked by the caller's client
 * view) shows, on the merged one, a link to the regression it was merged into, and no Reopen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Regression } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Batch, post } from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient } from './fixtures/api.ts';

const MIN = 60_000;
const END = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const ONSET = END - 40 * MIN;
let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const api = apiClient(() => server.url);
let all: Regression[] = [];

const each = (fn: (t: number, after: boolean) => void) => {
  for (let m = ONSET - 90 * MIN; m < END; m += MIN)
    for (let k = 0; k < 20; k++) fn(m + k * 3000, m >= ONSET);
};

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const probe = new Batch();
  const routes = new Batch();
  const callee = new Batch();
  const callers = new Batch();
  const shop = { 'service.name': 'shop', 'host.name': 'shop-1' };
  each((t, after) => {
    probe.span(
      { 'service.name': 'onset-agent', 'host.name': 'box-1' },
      'umount',
      'internal',
      t,
      after ? 60 : 15,
      {
        'onset.op': 'unmount',
        'onset.source': 'probe',
        'onset.probe': 'mount',
        'fs.mountpoint': '/var/tmp/onset-agent/mount/overlay',
      },
    );
    const serverMs = after ? 15 : 5;
    routes.span(shop, 'GET /checkout', 'server', t, 10 + serverMs + 0.3, {
      'http.request.method': 'GET',
      'http.route': '/checkout',
    });
    const client = callers.span(shop, 'GET', 'client', t, serverMs + 0.3, {
      'http.request.method': 'GET',
      'http.route': '/items',
      'peer.service': 'stock',
      'server.address': 'stock',
    });
    callee.span(
      { 'service.name': 'stock', 'host.name': 'stock-1' },
      'GET',
      'server',
      t + 0.15,
      serverMs,
      { 'http.request.method': 'GET', 'http.route': '/items' },
      client,
    );
  });
  for (const b of [probe, routes, callee, callers]) {
    await post(`${server.otlpUrl}/v1/traces`, b.body());
    await api('/api/v1/detect', { upto: new Date(END).toISOString() });
  }
  all = (await api<{ regressions: Regression[] }>('/api/v1/regressions?merged=true')).regressions;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the regression page', () => {
  it("marks Onset's own noise as such", async () => {
    const r = all.find((x) => x.service === 'onset-agent')!;
    expect(r.own).toBe('agent-probe');
    await page.goto(`${server.url}/regressions/${r.id}`);
    const tag = page.getByTestId('regression-own');
    await tag.waitFor();
    expect(await tag.textContent()).toBe("Onset's own: agent probe");
  });

  it('shows a merged regression as merged into its survivor, with no Reopen', async () => {
    const m = all.find((x) => x.merged_into);
    expect(m, JSON.stringify(all.map((r) => [r.id, r.service, r.merged_into]))).toBeDefined();
    await page.goto(`${server.url}/regressions/${m!.id}`);
    const note = page.getByTestId('regression-merged');
    await note.waitFor();
    expect(await note.textContent()).toContain(`regression ${m!.merged_into}`);
    expect(await page.getByRole('button', { name: 'Reopen' }).count()).toBe(0);
    await note.getByRole('link', { name: m!.merged_into! }).click();
    await page.waitForURL(new RegExp(`/regressions/${m!.merged_into}`));
    // The URL changes before the survivor's page replaces the merged one (whose status reads
    // 'resolved'): read the status once the merged page is gone.
    await note.waitFor({ state: 'detached' });
    expect(await page.getByTestId('regression-status').textContent()).toBe('open');
    // Never merged itself: no note.
    expect(await page.getByTestId('regression-merged').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
