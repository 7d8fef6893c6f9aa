/**
 * Issue 29 item 9, kernel marker hosts: on the kernel regression's page (incident 5, containerd
 * unmounts on node-1..4, the kernel rolled to node-3 and node-4), what a user reads about the kernel
 * rollout names only hosts that feed the regressed series, and one rollout (the posted marker plus
 * the markers inferred per host from os.version) is one chip on the chart and one suspect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression } from '@onset/contract';
import { launchChromium } from './fixtures/browser.ts';
import { detectIncidents } from './fixtures/incidents.ts';

const SERIES_HOSTS = ['node-1', 'node-2', 'node-3', 'node-4'];

let server: TestServer;
let browser: Browser;
let page: Page;
let kernel: Regression;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const open = await detectIncidents(server);
  kernel = open.find((r) => r.op === 'unmount')!;
  expect(kernel, 'a regression on the overlay unmounts').toBeTruthy();
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Every "node-N" / "host-…" style host name in a text. */
const hostNames = (text: string) => [...new Set(text.match(/\b[a-z][\w-]*-\d+\b/g) ?? [])];

describe('the kernel rollout on the kernel regression page', () => {
  it('is one chip on the chart and one suspect, naming only the hosts of this series', async () => {
    await page.goto(`${server.url}/regressions/${kernel.id}?from=now-6h`);
    const chart = page.getByTestId('chart-regression');
    await chart.locator('canvas').waitFor();
    const chips = chart.locator('.marker-chip[data-kind="kernel"]');
    await chips.first().waitFor();
    const labels = await chips.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    expect(labels, `one kernel chip for one rollout: ${JSON.stringify(labels)}`).toHaveLength(1);
    for (const h of hostNames(labels[0]!))
      expect(SERIES_HOSTS, `chip names ${h}: ${labels[0]}`).toContain(h);

    const suspects = page.locator('.suspect-list > li');
    await suspects.first().waitFor();
    const texts = await suspects.allTextContents();
    const kernelSuspects = texts.filter((t) => /4\.15\.0-36/.test(t));
    expect(kernelSuspects, `one kernel suspect of ${JSON.stringify(texts)}`).toHaveLength(1);
    for (const h of hostNames(kernelSuspects[0]!))
      expect(SERIES_HOSTS, `suspect names ${h}: ${kernelSuspects[0]}`).toContain(h);
  });
});
