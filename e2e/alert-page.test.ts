/**
 * The on-call path in Chromium against a real server and embedded PostgreSQL:
 * a webhook whose receiver refuses connections is shown failing, with the
 * error, on the alert page, the SLO page, the overview and Settings; once the
 * receiver is back and the outbox delivers, they say delivered. Acknowledge,
 * silence and resolve from the alert page change what the API reports, the
 * timeline says who did it, and the silence stops the next page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { AlertWithEvents, Silence, Slo, Webhook } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';
import { sendSpawnBurn } from './fixtures/api.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let receiverPort = 0;
const received: Array<{ status: string; alertId: string }> = [];
let receiver: http.Server | undefined;
let sloId = '';
let webhookId = '';
let alertId = '';

/** A JSON webhook receiver on a given loopback port, recording what it is sent. */
function listen(port: number): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ status: body.status, alertId: body.alert.id });
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

async function api<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    headers: init.json !== undefined ? { 'content-type': 'application/json' } : {},
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBeLessThan(300);
  return (text ? JSON.parse(text) : undefined) as T;
}

const evaluate = () => api('/api/v1/slos/evaluate', { json: {} });
const alertNow = () => api<AlertWithEvents>(`/api/v1/alerts/${alertId}`);

beforeAll(async () => {
  // Retries come quickly, so "the outbox delivers" happens within the test.
  process.env.ONSET_WEBHOOK_RETRY_BASE = '1s';
  process.env.ONSET_WEBHOOK_RETRY_MAX = '2s';
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  // A port nothing listens on: take one, then close it.
  const probe = await listen(0);
  receiverPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const hook = await api<Webhook>('/api/v1/webhooks', {
    json: { url: `http://127.0.0.1:${receiverPort}/hook`, format: 'json', name: 'oncall-bridge' },
  });
  webhookId = hook.id;
  await sendSpawnBurn(server.otlpUrl, 'pageserver');
  await new Promise((r) => setTimeout(r, 500)); // past the counting cursor's settle time
  const slo = await api<Slo>('/api/v1/slos', {
    json: {
      name: 'walredo spawn',
      service: 'pageserver',
      op: 'spawn',
      threshold_ms: 100,
      objective: 0.99,
      window: '28d',
      alert_tiers: { page_6h: false, ticket_1d: false, ticket_3d: false },
    },
  });
  sloId = slo.id;
  await evaluate();
  const alerts = await api<{ alerts: AlertWithEvents[] }>(`/api/v1/alerts?slo_id=${sloId}`);
  expect(alerts.alerts).toHaveLength(1);
  alertId = alerts.alerts[0]!.id;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
});

describe('delivery truth in the browser', () => {
  it('a refused receiver: the alert page, SLO page, overview and Settings say delivery is failing, with the error', async () => {
    const a = await alertNow();
    expect(a.paging.state).toBe('failing');
    expect(a.notifications[0]!.last_error).toContain('ECONNREFUSED');

    await page.goto(`${server.url}/alerts/${alertId}`);
    const lines = page.getByTestId('paging-lines');
    await expect.poll(() => lines.getAttribute('data-state')).toBe('failing');
    const text = (await lines.textContent()) ?? '';
    expect(text).toContain('delivery to oncall-bridge failing since');
    expect(text).toContain('ECONNREFUSED');
    expect(text).not.toMatch(/paged oncall-bridge|notified/i);
    expect(await page.getByTestId('timeline').textContent()).toContain(
      'delivery to oncall-bridge failing',
    );
    // The heading, its cause and its lines are the API's text, word for word.
    expect(await page.getByTestId('alert-title').textContent()).toBe(a.text.title);
    expect(await page.getByTestId('alert-cause').textContent()).toBe(a.text.cause);
    const shown = await page.getByTestId('alert-lines').locator('div').allTextContents();
    expect(shown.slice(1)).toEqual(a.text.lines.map((l) => l.text));
    // The series around the onset is drawn.
    await page.getByTestId('chart-alert').locator('canvas').waitFor();

    await page.goto(`${server.url}/slos/${sloId}`);
    const sloLines = page.getByTestId('paging-lines');
    await expect.poll(() => sloLines.getAttribute('data-state')).toBe('failing');
    expect(await sloLines.textContent()).toContain('ECONNREFUSED');

    await page.goto(`${server.url}/`);
    const badge = page.getByTestId('paging').first();
    await expect.poll(() => badge.getAttribute('data-state')).toBe('failing');
    expect(await badge.textContent()).toContain('delivery to oncall-bridge failing since');

    await page.goto(`${server.url}/settings`);
    const row = page.locator(`tr[data-webhook-id="${webhookId}"]`);
    await expect.poll(() => row.getAttribute('data-health')).toBe('failing');
    expect(await row.getByTestId('webhook-health').textContent()).toContain('failing since');
  });

  it('the receiver comes back and the outbox delivers: the same pages say delivered', async () => {
    receiver = await listen(receiverPort);
    await expect
      .poll(
        async () => {
          await evaluate(); // runs the delivery pass; the retry is due within a couple of seconds
          return (await alertNow()).paging.state;
        },
        { timeout: 30_000, interval: 1000 },
      )
      .toBe('paged');
    expect(received).toEqual([{ status: 'firing', alertId }]);

    await page.goto(`${server.url}/alerts/${alertId}`);
    const lines = page.getByTestId('paging-lines');
    await expect.poll(() => lines.getAttribute('data-state')).toBe('paged');
    expect(await lines.textContent()).toMatch(/paged oncall-bridge at .+ ✓/);
    // The timeline keeps the failure before the delivery.
    const kinds = await page
      .getByTestId('timeline')
      .locator('li')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
    expect(kinds).toEqual(['alerted', 'notify_failing', 'notified']);

    await page.goto(`${server.url}/slos/${sloId}`);
    await expect
      .poll(() => page.getByTestId('paging-lines').getAttribute('data-state'))
      .toBe('paged');
    await page.goto(`${server.url}/`);
    await expect
      .poll(() => page.getByTestId('paging').first().getAttribute('data-state'))
      .toBe('paged');
    expect(await page.getByTestId('paging').first().textContent()).toContain(
      'paged oncall-bridge at',
    );
    await page.goto(`${server.url}/settings`);
    await expect
      .poll(() => page.locator(`tr[data-webhook-id="${webhookId}"]`).getAttribute('data-health'))
      .toBe('ok');
  });
});

describe('acknowledge, silence and resolve from the alert page', () => {
  it('acknowledge with a name and a comment: the API reports it, the timeline shows who', async () => {
    await page.goto(`${server.url}/alerts/${alertId}`);
    await page.getByLabel('Your name').fill('alice');
    await page.getByLabel('Comment').fill('looking at walredo');
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await expect.poll(async () => (await alertNow()).acknowledged?.by).toBe('alice');
    expect((await alertNow()).acknowledged?.comment).toBe('looking at walredo');
    const ack = page.locator('[data-testid="timeline"] li[data-kind="acknowledged"]');
    await ack.waitFor();
    expect(await ack.textContent()).toContain('acknowledged by alice');
    expect(await ack.textContent()).toContain('looking at walredo');
  });

  it('silence for a chosen duration: the API has the silence and the alert is silenced by it', async () => {
    const before = Date.now();
    await page.getByLabel('Comment').fill('rollback in progress');
    await page.getByLabel('Silence for').selectOption('4h');
    await page.getByRole('button', { name: 'Silence', exact: true }).click();
    await expect
      .poll(async () => (await api<{ silences: Silence[] }>('/api/v1/silences')).silences.length)
      .toBe(1);
    const [s] = (await api<{ silences: Silence[] }>('/api/v1/silences')).silences;
    expect(s).toMatchObject({
      slo_id: sloId,
      comment: 'rollback in progress',
      created_by: 'alice',
      active: true,
    });
    const hours = (Date.parse(s!.ends_at) - before) / 3_600_000;
    expect(hours).toBeGreaterThan(3.9);
    expect(hours).toBeLessThan(4.1);
    expect((await alertNow()).silenced_by).toBe(s!.id);
    const sil = page.locator('[data-testid="timeline"] li[data-kind="silenced"]');
    await sil.waitFor();
    expect(await sil.textContent()).toContain('silenced by alice');
  });

  it('resolve: the API says resolved by whom; the SLO still burns, and its next alert is held by the silence', async () => {
    await page.getByLabel('Comment').fill('rolled back');
    await page.getByRole('button', { name: 'Resolve' }).click();
    await expect.poll(async () => (await alertNow()).status).toBe('resolved');
    const done = page.locator('[data-testid="timeline"] li[data-kind="resolved"]');
    await done.waitFor();
    expect(await done.textContent()).toContain('resolved by alice');
    expect(await page.getByTestId('alert-status').textContent()).toBe('resolved');

    await evaluate(); // still burning: a new episode, under the silence
    const all = (await api<{ alerts: AlertWithEvents[] }>(`/api/v1/alerts?slo_id=${sloId}`)).alerts;
    expect(all).toHaveLength(2);
    const next = all.find((a) => a.id !== alertId)!;
    expect(next).toMatchObject({ status: 'firing', notified: false });
    expect(next.paging.state).toBe('silenced');
    await evaluate();
    // The receiver got the first alert's firing and its resolve, and nothing for the silenced one.
    expect(received).toEqual([
      { status: 'firing', alertId },
      { status: 'resolved', alertId },
    ]);
    await page.goto(`${server.url}/alerts/${next.id}`);
    await expect
      .poll(() => page.getByTestId('paging-lines').getAttribute('data-state'))
      .toBe('silenced');
    expect(await page.getByTestId('paging-lines').textContent()).toContain('not paged: silenced');
    expect(pageErrors).toEqual([]);
  });
});
