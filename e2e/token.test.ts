/**
 * A server that requires tokens: the UI asks for one on the first 401, keeps
 * it in localStorage, reloads the data, and Settings shows what it may do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';

const SHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [server, browser] = await Promise.all([
    startTestServer({ env: { ONSET_TOKENS: 'read:tok-read-7f3a,admin:tok-admin-91c2' } }),
    launchChromium(),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('bearer token from a prompt', () => {
  it('asks for a token on 401, stores it, and shows its scopes', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/deploys`);
    const dialog = page.getByRole('dialog', { name: 'This Onset server needs a token' });
    await dialog.waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'token-prompt.png') });
    // A wrong token is refused and the prompt comes back.
    await dialog.getByLabel('Bearer token').fill('nope');
    await dialog.getByRole('button', { name: 'Save and reload data' }).click();
    await dialog.waitFor();
    await expect.poll(() => dialog.textContent()).toContain('refused');
    await dialog.getByLabel('Bearer token').fill('tok-read-7f3a');
    await dialog.getByRole('button', { name: 'Save and reload data' }).click();
    await page.getByText('No deploy markers in this range').waitFor();
    expect(await page.evaluate(() => localStorage.getItem('onset.token'))).toBe('tok-read-7f3a');

    // Settings: read yes, admin no (webhooks answer 403 for this token).
    await page.goto(`${server.url}/settings`);
    const access = page.getByTestId('access');
    await access.waitFor();
    await expect.poll(() => access.textContent()).toContain('✓ read');
    expect(await access.textContent()).toContain('✗ admin');
    await page.screenshot({ path: path.join(SHOTS, 'settings-token.png'), fullPage: true });
    await context.close();
  });
});
