/**
 * The on-call path in a real browser against a real server: two incidents
 * from product.md are sent as OTLP traces and deploy markers, detection runs,
 * and the UI must make each obvious (docs/ui.md). Screenshots of every page
 * land in e2e/screenshots/ to be looked at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression } from '@onset/contract';
import { XSS_DESCRIPTION } from '@onset/testkit/incidents';
import { launchChromium, layoutShift } from './fixtures/browser.ts';
import { detectIncidents } from './fixtures/incidents.ts';

const SHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const dialogs: string[] = [];
const pageErrors: string[] = [];
let kernel: Regression;
let edge: Regression;

async function shot(p: Page, name: string) {
  await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const open = await detectIncidents(server);
  kernel = open.find((r) => r.op === 'unmount')!;
  edge = open
    .filter((r) => r.name === 'GET /lookup' && r.service === 'checkout')
    .sort((a, b) => b.ratio_p50 - a.ratio_p50)[0]!;
  expect(kernel, 'a regression on the overlay unmounts').toBeTruthy();
  expect(edge, 'a regression on checkout → urlite GET /lookup').toBeTruthy();

  context = await browser.newContext({
    viewport: { width: 1400, height: 900 },
    colorScheme: 'light',
  });
  page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

describe('on-call path through the UI', () => {
  it('the overview lists both regressions with before → after, ratio and suspect', async () => {
    await page.goto(server.url + '/');
    const rows = page.locator('.regression-row');
    await rows.first().waitFor();
    const kernelRow = page.locator(`[data-regression-id="${kernel.id}"]`);
    const edgeRow = page.locator(`[data-regression-id="${edge.id}"]`);
    await expect.poll(() => kernelRow.textContent()).toContain('/run/containerd/overlay/rootfs');
    await expect.poll(() => edgeRow.textContent()).toContain('GET /lookup');
    // "20.1 ms → 9.92 s, ×392": a before → after change with a ratio.
    expect(await kernelRow.textContent()).toMatch(/ms → [\d.]+ s, ×\d+/);
    expect(await edgeRow.textContent()).toMatch(/checkout → urlite/);
    // One row for the incident, saying it was found on its two views.
    expect(await edgeRow.textContent()).toContain('on 2 series');
    expect(await kernelRow.textContent()).toContain('kernel');
    await shot(page, 'overview');
  });

  it('clicking the kernel regression opens a log-scale chart with the marker line, onset and shaded levels', async () => {
    await page.locator(`[data-regression-id="${kernel.id}"] a`).click();
    await page.waitForURL(new RegExp(`/regressions/${kernel.id}\\?`));
    const chart = page.getByTestId('chart-regression');
    await chart.locator('canvas').waitFor();
    // Log scale: the y axis reads in decades with human units.
    expect(await chart.getAttribute('data-y-scale')).toBe('log');
    const ticks = (await chart.getAttribute('data-y-ticks'))!.split('|');
    expect(ticks).toEqual(expect.arrayContaining(['10 ms', '100 ms', '1 s']));
    expect(await page.getByRole('button', { name: 'Log', pressed: true }).count()).toBe(1);

    // The kernel marker is on the chart, drawn as a vertical line in the canvas at its chip's x.
    const chip = chart.locator('.marker-chip[data-kind="kernel"]').first();
    await chip.waitFor();
    expect(await chip.getAttribute('aria-label')).toMatch(/kernel .*4\.15\.0-36/);
    expect(
      await markerColumnColour(page, chip),
      'a coloured vertical line under the kernel marker chip',
    ).not.toBeNull();
    expect(
      await markerColumnColour(page, chip, -60),
      'no such line where there is no marker',
    ).toBeNull();

    // Onset line and the before/after levels: the after level sits far above the before level.
    await chart.getByTestId('onset-line').waitFor();
    const before = (await chart.getByTestId('band-before').boundingBox())!;
    const after = (await chart.getByTestId('band-after').boundingBox())!;
    expect(before.width).toBeGreaterThan(50);
    expect(after.width).toBeGreaterThan(20);
    expect(after.y).toBeLessThan(before.y - 100);
    expect(after.x).toBeGreaterThanOrEqual(before.x + before.width - 2);
    // Nothing jumped while the data came in (cumulative layout shift, as Chrome measures it).
    expect(await layoutShift(page)).toBeLessThan(0.05);
    await shot(page, 'regression-kernel');
  });

  it('the cohort split names the kernel versions and flags the slow one', async () => {
    const panel = page.getByTestId('cohort-panel');
    const slow = panel.locator('[data-cohort="4.15.0-36"]');
    const fast = panel.locator('[data-cohort="4.4.0-138"]');
    await slow.waitFor();
    await fast.waitFor();
    expect(await slow.textContent()).toContain('os.version=4.15.0-36');
    expect(await slow.locator('.slow-tag').count()).toBe(1);
    expect(await fast.locator('.slow-tag').count()).toBe(0);
    await panel.getByTestId('chart-cohorts').locator('canvas').waitFor();
  });

  it('a deep link opens the same view', async () => {
    const url = page.url();
    const heading = await page.locator('h1').textContent();
    const range = await page.getByTestId('range-button').textContent();
    const other = await context.newPage();
    await other.goto(url);
    await other.getByTestId('chart-regression').locator('canvas').waitFor();
    expect(await other.locator('h1').textContent()).toBe(heading);
    expect(await other.getByTestId('range-button').textContent()).toBe(range);
    expect(other.url()).toBe(url);
    await other.close();
  });

  it('the edge regression shows client, server and gap, and that only callers see the +40 ms', async () => {
    await page.goto(`${server.url}/`);
    await page.locator(`[data-regression-id="${edge.id}"] a`).click();
    const panel = page.getByTestId('edge-panel');
    await panel.getByTestId('chart-edge').locator('canvas').waitFor();
    for (const view of ['client', 'server', 'gap'])
      expect(await panel.locator(`[data-view="${view}"]`).textContent()).not.toContain(
        'not reported',
      );
    // The gap went from well under a millisecond to ~40 ms; the server view stayed flat.
    expect(await panel.locator('[data-view="gap"]').textContent()).toMatch(/→ (39|40|41)\.\d ms/);
    expect(await panel.locator('[data-view="server"]').textContent()).toMatch(
      /µs → \d+ µs|ms → 0\.\d+ ms/,
    );
    expect(await panel.getByRole('note').textContent()).toMatch(/Only callers see it/);
    // One incident: the gap (headline) and client views are members of this one regression, each linking to its series.
    const members = page.getByTestId('members');
    await members.waitFor();
    const rows = members.locator('tbody tr');
    expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-view')))).toEqual(
      edge.members.map((m) => m.view),
    );
    expect(edge.members.map((m) => m.view).sort()).toEqual(['client', 'gap']);
    for (const m of edge.members)
      expect(
        await members.locator(`tr[data-series-id="${m.series_id}"] a`).getAttribute('href'),
      ).toContain(`series=${m.series_id}`);
    await shot(page, 'regression-edge');
    // Acknowledge it with a name and a comment: the page and the overview say so.
    await page.getByLabel('Your name').fill('bob');
    await page.getByLabel('Comment').fill('checking the gap');
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByTestId('regression-status').filter({ hasText: 'acknowledged' }).waitFor();
    // The lifecycle the server computed: detected, alerted (nobody to page), acknowledged by bob.
    const life = (await (
      await fetch(`${server.url}/api/v1/regressions/${edge.id}/timeline`)
    ).json()) as {
      timeline: Array<{ kind: string; actor: string | null; comment: string | null }>;
      alerts: Array<{ regression_id: string; paging: { state: string } }>;
    };
    expect(life.timeline.map((e) => e.kind)).toEqual(['detected', 'alerted', 'acknowledged']);
    expect(life.timeline[2]).toMatchObject({ actor: 'bob', comment: 'checking the gap' });
    expect(life.alerts.map((a) => [a.regression_id, a.paging.state])).toEqual([
      [edge.id, 'no_webhook'],
    ]);
    const acked = page.locator('[data-testid="timeline"] li[data-kind="acknowledged"]');
    await acked.waitFor();
    expect(await acked.textContent()).toContain('acknowledged by bob');
    expect(await page.getByTestId('paging-lines').textContent()).toContain('not paged: no webhook');
    await page.goto(`${server.url}/`);
    await expect
      .poll(() => page.locator(`[data-regression-id="${edge.id}"]`).textContent())
      .toContain('acked');
  });

  it('a marker description from CI renders as text, never as HTML', async () => {
    await page.goto(`${server.url}/deploys?from=now-6h`);
    const desc = page.locator('.deploy-desc', { hasText: '<img src=x onerror=alert(1)>' });
    await desc.waitFor();
    expect(await desc.textContent()).toBe(XSS_DESCRIPTION);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot(page, 'deploys');
  });

  it('explorer, SLOs and settings render (screenshots), and nothing threw', async () => {
    const series = (await (
      await fetch(`${server.url}/api/v1/series?service=containerd`)
    ).json()) as { series: Array<{ id: string }> };
    await page.goto(`${server.url}/explorer?series=${series.series[0]!.id}&from=now-4h`);
    const heat = page.getByTestId('chart-heatmap');
    await heat.locator('canvas').waitFor();
    // The heatmap has cells: both the ~20 ms and the ~9 s populations are counted.
    await expect.poll(() => heat.locator('figcaption').textContent()).toMatch(/max \d+/);
    expect(await heat.locator('.chart-nodata').count()).toBe(0);
    await page
      .getByTestId('chart-quantiles')
      .locator('.marker-chip[data-kind="kernel"]')
      .first()
      .waitFor();
    await shot(page, 'explorer');
    // Drag across the chart to zoom: the URL gets the absolute window, Back undoes it.
    const plot = (await page
      .getByTestId('chart-quantiles')
      .getByTestId('plot-area')
      .boundingBox())!;
    await page.mouse.move(plot.x + plot.width * 0.5, plot.y + plot.height / 2);
    await page.mouse.down();
    await page.mouse.move(plot.x + plot.width * 0.75, plot.y + plot.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForURL(/from=\d{4}-\d\d-\d\dT/);
    const zoomed = new URL(page.url());
    const width =
      Date.parse(zoomed.searchParams.get('to')!) - Date.parse(zoomed.searchParams.get('from')!);
    expect(width).toBeGreaterThan(40 * 60_000); // a quarter of 4 hours, give or take the drag
    expect(width).toBeLessThan(80 * 60_000);
    await expect.poll(() => page.getByTestId('range-button').textContent()).toMatch(/→/);
    await page.goBack();
    await page.waitForURL(/from=now-4h/);
    await page.goto(`${server.url}/slos`);
    await page.locator('h1', { hasText: 'SLOs' }).waitFor();
    await shot(page, 'slos');
    await page.goto(`${server.url}/settings`);
    await page.getByTestId('access').waitFor();
    expect(await page.getByTestId('access').textContent()).toContain('runs open');
    await shot(page, 'settings');
    expect(pageErrors).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});

/**
 * The colour drawn in the chart canvas in the column under a marker chip
 * (shifted by dx px), just inside the top of the plot (above the data lines),
 * or null if only background and grid are there: no marker line was drawn.
 */
async function markerColumnColour(
  p: Page,
  chip: ReturnType<Page['locator']>,
  dx = 0,
): Promise<string | null> {
  const box = (await chip.boundingBox())!;
  const plot = (await p.getByTestId('chart-regression').getByTestId('plot-area').boundingBox())!;
  const x = box.x + box.width / 2 + dx;
  return p.evaluate(
    ({ x, top }) => {
      const canvas = document.querySelector(
        '[data-testid="chart-regression"] canvas',
      ) as HTMLCanvasElement;
      const rect = canvas.getBoundingClientRect();
      const ratio = canvas.width / rect.width;
      const ctx = canvas.getContext('2d')!;
      // A 5 × 16 px patch around the chip's centre line (a dashed line still shows in it).
      const data = ctx.getImageData(
        Math.round((x - rect.left - 2) * ratio),
        Math.round((top - rect.top + 3) * ratio),
        Math.round(5 * ratio),
        Math.round(16 * ratio),
      ).data;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
        // Saturated red/orange: the top-suspect line (#e03131) or the kernel colour (#d9480f).
        if (a > 100 && r > 150 && g < 120 && b < 100) return `rgb(${r},${g},${b})`;
      }
      return null;
    },
    { x, top: plot.y },
  );
}
