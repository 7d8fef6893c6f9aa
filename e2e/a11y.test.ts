/**
 * Craft, measured: axe-core (WCAG 2.x A/AA rules, colour contrast included)
 * over every page of the UI in the light and the dark theme reports no
 * serious or critical violation, every chart has a text summary, and no
 * page scrolls sideways at 390 px.
 * The server holds what an on-call engineer would see: two regressions with
 * suspects, deploy markers, SLOs (one paging), alerts, a webhook whose
 * receiver refuses connections and its failed deliveries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Regression } from '@onset/contract';
import { sendIncidents } from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let server: TestServer;
let browser: Browser;
let pages: Array<{ name: string; path: string }>;

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBeLessThan(300);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await sendIncidents({ apiUrl: server.url, otlpUrl: server.otlpUrl });
  await post('/api/v1/detect', {});
  const { regressions } = (await (
    await fetch(`${server.url}/api/v1/regressions?status=open`)
  ).json()) as { regressions: Regression[] };
  const kernel = regressions.find((r) => r.op === 'unmount')!;
  const edge = regressions.find((r) => r.name === 'GET /lookup')!;
  expect(kernel && edge, 'both incidents regressed').toBeTruthy();
  // A receiver that refuses connections: deliveries fail and say so.
  await post('/api/v1/webhooks', { name: 'pager (down)', url: 'http://127.0.0.1:9/hook' });
  // One SLO the kernel regression burns (it pages), one within budget.
  const paging = await post('/api/v1/slos', {
    series_id: kernel.series_id,
    name: 'unmount latency',
    threshold_ms: kernel.before.p99_ms * 2,
    objective: 0.99,
    window: '7d',
  });
  await post('/api/v1/slos', { series_id: edge.series_id, objective: 0.9, window: '28d' });
  await post('/api/v1/slos/evaluate', {});
  const { alerts } = (await (await fetch(`${server.url}/api/v1/alerts`)).json()) as {
    alerts: Array<{ id: string }>;
  };
  const { series } = (await (await fetch(`${server.url}/api/v1/series`)).json()) as {
    series: Array<{ id: string }>;
  };
  pages = [
    { name: 'overview', path: '/' },
    { name: 'explorer list', path: '/explorer?from=now-24h' },
    { name: 'explorer series', path: `/explorer?series=${kernel.series_id}&from=now-24h` },
    { name: 'explorer edge', path: `/explorer?series=${edge.series_id}&from=now-24h` },
    { name: 'regression (kernel)', path: `/regressions/${kernel.id}` },
    { name: 'regression (edge)', path: `/regressions/${edge.id}` },
    { name: 'slos', path: '/slos' },
    { name: 'new slo', path: `/slos?create=${series[0]!.id}` },
    { name: 'slo detail', path: `/slos/${String(paging.id)}` },
    { name: 'deploys', path: '/deploys?from=now-7d' },
    { name: 'settings', path: '/settings' },
    { name: 'alerts inbox', path: '/alerts' },
    ...(alerts[0] ? [{ name: 'alert', path: `/alerts/${alerts[0].id}` }] : []),
    { name: 'not found', path: '/no-such-page' },
  ];
  expect(alerts.length, 'the paging SLO raised an alert').toBeGreaterThan(0);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A 390 px phone, as the layout and the mobile axe runs see the pages. */
const PHONE = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
};

/** Open a page and wait until its data has arrived and nothing is loading. */
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.waitForLoadState('networkidle');
  await page
    .locator('.spinner, [aria-busy="true"]')
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => {});
  await page.waitForTimeout(200);
}

interface Finding {
  id: string;
  impact: string;
  nodes: number;
  sample: string;
}

async function axe(page: Page): Promise<Finding[]> {
  await page.addScriptTag({ path: AXE_PATH });
  return page.evaluate(async () => {
    const w = window as unknown as {
      axe: {
        run: (
          ctx: Document,
          o: object,
        ) => Promise<{
          violations: Array<{
            id: string;
            impact: string | null;
            nodes: Array<{ target: unknown[]; failureSummary?: string }>;
          }>;
        }>;
      };
    };
    const r = await w.axe.run(document, {
      runOnly: {
        type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
      },
      resultTypes: ['violations'],
    });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? 'unknown',
      nodes: v.nodes.length,
      sample: v.nodes
        .slice(0, 3)
        .map((n) => `${JSON.stringify(n.target)} ${n.failureSummary ?? ''}`.slice(0, 300))
        .join(' | '),
    }));
  });
}

describe('accessibility and layout of every page', () => {
  for (const theme of ['light', 'dark'] as const) {
    it.skipIf(!!process.env.ONLY_LAYOUT)(
      `axe-core: no serious or critical violation in the ${theme} theme`,
      async () => {
        const context = await browser.newContext({
          viewport: { width: 1280, height: 900 },
          colorScheme: theme,
        });
        await context.addInitScript((t) => localStorage.setItem('onset.theme', t), theme);
        const page = await context.newPage();
        const report: string[] = [];
        let serious = 0;
        for (const p of pages) {
          await open(page, p.path);
          expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
          // Every chart carries its data in words for screen readers.
          const charts = await page.locator('figure.chart').evaluateAll((figs) =>
            figs.map((f) => ({
              name: f.getAttribute('aria-label') ?? '',
              summary: f.querySelector('[data-testid="chart-summary"]')?.textContent ?? '',
            })),
          );
          for (const c of charts) {
            expect(c.name, `${p.name}: a chart without a name`).not.toBe('');
            expect(c.summary, `${p.name}: ${c.name} has no text summary`).toMatch(/\w{3}/);
          }
          const found = (await axe(page)).filter(
            (f) => f.impact === 'serious' || f.impact === 'critical',
          );
          const nodes = found.reduce((a, f) => a + f.nodes, 0);
          serious += nodes;
          report.push(
            `${theme} ${p.name}: ${nodes} serious/critical nodes` +
              found.map((f) => `\n   ${f.impact} ${f.id} ×${f.nodes}: ${f.sample}`).join(''),
          );
        }
        console.log(report.join('\n'));
        await context.close();
        expect(serious, report.join('\n')).toBe(0);
      },
      240_000,
    );
  }

  it('at 390 px: axe-core finds no serious or critical violation and no table column is cut off', async () => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const report: string[] = [];
    for (const p of pages) {
      await open(page, p.path);
      const found = (await axe(page)).filter(
        (f) => f.impact === 'serious' || f.impact === 'critical',
      );
      for (const f of found) report.push(`${p.name}: ${f.impact} ${f.id} ×${f.nodes}: ${f.sample}`);
      // A cell past the right edge of a box that clips instead of scrolling cannot be reached.
      const clipped = await page.evaluate(() =>
        [...document.querySelectorAll('th, td')]
          .filter((cell) => {
            const right = cell.getBoundingClientRect().right;
            for (let e = cell.parentElement; e && e !== document.body; e = e.parentElement) {
              const o = getComputedStyle(e).overflowX;
              if (o === 'auto' || o === 'scroll') return false;
              if (o === 'hidden' || o === 'clip')
                return right > e.getBoundingClientRect().right + 1;
            }
            return right > document.documentElement.clientWidth + 1;
          })
          .slice(0, 3)
          .map((c) => (c.textContent ?? '').trim().slice(0, 40)),
      );
      if (clipped.length) report.push(`${p.name}: cells cut off: ${JSON.stringify(clipped)}`);
    }
    await context.close();
    expect(report).toEqual([]);
  }, 240_000);

  it('no page scrolls sideways at 390 px', async () => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const wide: string[] = [];
    for (const p of pages) {
      await open(page, p.path);
      const { scroll, client, culprits } = await page.evaluate(() => {
        const client = document.documentElement.clientWidth;
        // The outermost elements that stick out, to say what to fix.
        const out = [...document.querySelectorAll('body *')].filter(
          (e) =>
            e.getBoundingClientRect().right > client + 1 &&
            !(e.parentElement && e.parentElement.getBoundingClientRect().right > client + 1),
        );
        return {
          scroll: document.documentElement.scrollWidth,
          client,
          culprits: out.slice(0, 3).map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
        };
      });
      if (scroll > client + 1)
        wide.push(`${p.name}: ${scroll}px wide in ${client}px (${culprits.join(', ')})`);
    }
    await context.close();
    expect(wide).toEqual([]);
  }, 180_000);
});
