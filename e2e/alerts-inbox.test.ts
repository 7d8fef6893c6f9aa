/**
 * The alerts inbox at /alerts, in Chromium against a real server: an SLO
 * burn whose only receiver refuses connections, viewed with a time range a
 * month in the past that holds none of it. The inbox lists it with the
 * API's title and since, its receiver ✗ and a loud "nobody was reached",
 * the SLO behind it; acknowledged and silenced, it says by whom and until
 * when; and it is used from the keyboard alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { Alert, Slo } from '@onset/contract';
import { startTestServer, type TestServer, allowLoopbackWebhooks } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient, sendSpawnBurn } from './fixtures/api.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let alert: Alert;
const api = apiClient(() => server.url);

beforeAll(async () => {
  allowLoopbackWebhooks();
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  // A port nothing listens on: the receiver refuses every delivery.
  const probe = http.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  await api('/api/v1/webhooks', {
    url: `http://127.0.0.1:${port}/hook`,
    format: 'json',
    name: 'oncall-bridge',
  });
  await sendSpawnBurn(server.otlpUrl, 'inboxed');
  await new Promise((r) => setTimeout(r, 500)); // past the counting cursor's settle time
  await api<Slo>('/api/v1/slos', {
    name: 'inboxed spawns',
    service: 'inboxed',
    op: 'spawn',
    threshold_ms: 100,
    objective: 0.99,
    window: '28d',
    alert_tiers: { page_6h: false, ticket_1d: false, ticket_3d: false },
  });
  await api('/api/v1/slos/evaluate', {}); // fires, and tries the refused receiver
  const { alerts } = await api<{ alerts: Alert[] }>('/api/v1/alerts?status=firing');
  expect(alerts).toHaveLength(1);
  alert = alerts[0]!;
  expect(alert.paging.delivered).toBe(0);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the alerts inbox', () => {
  it('lists the firing alert whatever the time range, and says loudly nobody was reached', async () => {
    // A time range a month ago, holding nothing of it: the inbox lists what fires now anyway.
    await page.goto(`${server.url}/alerts?from=now-30d&to=now-29d`);
    const row = page.locator(`tr[data-alert-id="${alert.id}"]`);
    await row.waitFor();
    expect(await row.getByRole('link', { name: alert.title }).count()).toBe(1);
    expect(await row.locator('td[title]').getAttribute('title')).toBe(alert.started_at);
    const rx = row.getByTestId('receivers');
    expect(await rx.textContent()).toContain('oncall-bridge ✗');
    expect(await rx.getByTestId('nobody-reached').textContent()).toBe('nobody was reached');
    expect(await row.getByRole('link', { name: 'SLO inboxed spawns' }).count()).toBe(1);
  });

  it('acknowledged and silenced: by whom, until when, why', async () => {
    await api(`/api/v1/alerts/${alert.id}/ack`, { by: 'carol' });
    const silence = await api<{ id: string; ends_at: string }>('/api/v1/silences', {
      slo_id: alert.slo_id,
      duration: '2h',
      comment: 'failover drill',
      created_by: 'carol',
    });
    await page.reload();
    const row = page.locator(`tr[data-alert-id="${alert.id}"]`);
    await row.waitFor();
    await expect.poll(() => row.textContent()).toContain('by carol');
    const note = row.getByTestId('silence-note');
    expect(await note.getAttribute('data-silence-id')).toBe(silence.id);
    expect(await note.locator('time').getAttribute('datetime')).toBe(silence.ends_at);
    expect(await note.textContent()).toContain('by carol: “failover drill”');
    // Silenced after its page went out and failed: still nobody was reached, and it says so.
    expect(await row.getByTestId('nobody-reached').count()).toBe(1);
  });

  it('is used from the keyboard: Tab reaches the alert, Enter opens its page', async () => {
    await page.goto(`${server.url}/alerts`);
    const link = page.locator(`tr[data-alert-id="${alert.id}"]`).getByRole('link', {
      name: alert.title,
    });
    await link.waitFor();
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if (await link.evaluate((el) => el === document.activeElement)) break;
    }
    expect(await link.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/alerts/${alert.id}(\\?|$)`));
    await expect.poll(() => page.getByTestId('alert-title').textContent()).toBe(alert.text.title);
    expect(pageErrors).toEqual([]);
  });
});
