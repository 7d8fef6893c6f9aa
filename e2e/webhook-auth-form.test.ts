/**
 * A webhook's credentials from the Settings form, in Chromium against a real
 * server: a receiver on loopback that answers 401 without HTTP basic auth.
 * Created with a user and password in the form, the webhook's test delivery
 * reaches it with that Authorization; the row shows "basic auth alice:••••"
 * and the password is nowhere on the page or in the API. Edited to a custom
 * header, the next test carries that header instead; removed, none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { Webhook } from '@onset/contract';
import { startTestServer, type TestServer, allowLoopbackWebhooks } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient } from './fixtures/api.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const api = apiClient(() => server.url);
const PASSWORD = 'hunter2-s3cret';
const HEADER_VALUE = 'key-0f9e8d7c6b';
const BASIC = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
/** Each request the receiver got: its Authorization and X-Api-Key headers, and what it answered. */
const seen: Array<{ authorization?: string; key?: string; answered: number }> = [];
let rx: http.Server;
let rxUrl = '';

beforeAll(async () => {
  allowLoopbackWebhooks();
  rx = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const authorization = req.headers.authorization;
      const key = req.headers['x-api-key'] as string | undefined;
      const answered = authorization === BASIC || key === HEADER_VALUE ? 200 : 401;
      seen.push({ authorization, key, answered });
      res.writeHead(answered).end();
    });
  });
  rx.listen(0, '127.0.0.1');
  await new Promise((r) => rx.once('listening', r));
  rxUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise<void>((r) => rx?.close(() => r()));
});

const hooks = async () => (await api<{ webhooks: Webhook[] }>('/api/v1/webhooks')).webhooks;

async function sendTest(id: string): Promise<void> {
  const before = seen.length;
  const row = page.locator(`tr[data-webhook-id="${id}"]`);
  await row.getByRole('button', { name: 'Send test' }).click();
  await expect.poll(() => seen.length, { timeout: 15_000 }).toBeGreaterThan(before);
}

describe('webhook credentials from Settings', () => {
  let id = '';

  it('created with basic auth: the receiver gets it, the page shows it masked', async () => {
    await page.goto(`${server.url}/settings`);
    const form = page.getByRole('form', { name: 'New webhook' });
    await form.getByLabel('Receiver URL').fill(rxUrl);
    await form.getByLabel('Name').fill('am-behind-auth');
    await form.getByLabel('Credentials').selectOption('basic');
    await form.getByLabel('User name').fill('alice');
    await form.getByLabel('Password').fill(PASSWORD);
    expect(await form.getByLabel('Password').getAttribute('type')).toBe('password');
    await form.getByRole('button', { name: 'Add webhook' }).click();
    await expect.poll(async () => (await hooks()).length).toBe(1);
    const w = (await hooks())[0]!;
    id = w.id;
    expect(w.auth).toEqual({ type: 'basic', username: 'alice' });
    expect(JSON.stringify(w)).not.toContain(PASSWORD);
    const row = page.locator(`tr[data-webhook-id="${id}"]`);
    await expect
      .poll(() => row.getByTestId('webhook-auth').textContent())
      .toBe('basic auth alice:••••');
    await sendTest(id);
    expect(seen.at(-1)).toMatchObject({ authorization: BASIC, answered: 200 });
    expect(await page.content()).not.toContain(PASSWORD);
  });

  it('edited to a custom header: the next delivery carries it; the form keeps nothing', async () => {
    const row = page.locator(`tr[data-webhook-id="${id}"]`);
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: /^Edit webhook/ });
    // The stored credentials are offered as kept, never shown.
    expect(await form.getByLabel('Credentials').inputValue()).toBe('keep');
    await form.getByLabel('Credentials').selectOption('header');
    await form.getByLabel('Header name').fill('X-Api-Key');
    await form.getByLabel('Header value').fill(HEADER_VALUE);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => (await hooks())[0]!.auth)
      .toEqual({
        type: 'header',
        name: 'X-Api-Key',
      });
    await expect
      .poll(() => row.getByTestId('webhook-auth').textContent())
      .toBe('header X-Api-Key: ••••');
    await sendTest(id);
    expect(seen.at(-1)).toMatchObject({ key: HEADER_VALUE, answered: 200 });
    expect(seen.at(-1)!.authorization).toBeUndefined();
    expect(await page.content()).not.toContain(HEADER_VALUE);
  });

  it('edited to remove them: the receiver refuses the next test (401)', async () => {
    const row = page.locator(`tr[data-webhook-id="${id}"]`);
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: /^Edit webhook/ });
    await form.getByLabel('Credentials').selectOption('none');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await hooks())[0]!.auth ?? null).toBeNull();
    await expect.poll(() => row.getByTestId('webhook-auth').count()).toBe(0);
    await sendTest(id);
    expect(seen.at(-1)).toEqual({ authorization: undefined, key: undefined, answered: 401 });
    expect(pageErrors).toEqual([]);
  });
});
