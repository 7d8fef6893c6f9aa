/**
 * Drill-down in Chromium against a real server on embedded PostgreSQL, fed by the official OTel
 * SDK (OTLP protobuf): on the Explorer, in "Compare calls" mode, a box dragged on the heatmap
 * and a range dragged on the quantiles compare the selected calls with the rest (counts and
 * attribute rows equal to what was sent); a selected call's trace id opens the trace view with
 * its three spans (service, kind, duration as sent) and the configured trace viewer's link; the
 * overlay draws the same window a day earlier (its legend value equals the API's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { context, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { formatLatencyMs } from '@onset/core';
import { parseTime } from '@onset/contract';
import type {
  Evidence,
  QuantilesColumns,
  Regression,
  SelectionCompare,
  SeriesList,
} from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { launchChromium } from './fixtures/browser.ts';

const TEMPLATE = 'http://viewer.example:16686/trace/{trace_id}';
const MIN = 60_000;
const DAY = 86_400_000;
let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

interface Sent {
  traceId: string;
  startMs: number;
  host: string;
  flag: string;
  serverMs: number;
  clientMs: number;
  calleeMs: number;
}
const sent: Sent[] = [];
const endMs = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
const startMs = endMs - 40 * MIN;
const slowFromMs = endMs - 10 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();

function provider(attrs: Record<string, string>) {
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes(attrs),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${server.otlpUrl}/v1/traces` }), {
        maxExportBatchSize: 256,
        maxQueueSize: 10_000,
      }),
    ],
  });
  return { p, tracer: p.getTracer('drill-down-e2e') };
}

/** shop's server span, its client span to pricing, pricing's server span; `base` ms is the callee's floor. */
function call(shop: Tracer, pricing: Tracer, at: number, host: string, i: number, base: number) {
  const slow = at >= slowFromMs && at < endMs && host === 'shop-2';
  const flag = slow || (host === 'shop-2' && i % 3 === 0) ? 'new-pricing' : 'old-pricing';
  const calleeMs = slow ? 200 + (i % 7) : base + (i % 5);
  const clientMs = calleeMs + 3;
  const serverMs = clientMs + 4 + (i % 3);
  const server = shop.startSpan('GET /cart', {
    kind: SpanKind.SERVER,
    startTime: at,
    attributes: { 'http.request.method': 'GET', 'http.route': '/cart', 'app.flag': flag },
  });
  const client = shop.startSpan(
    'GET',
    {
      kind: SpanKind.CLIENT,
      startTime: at + 1,
      attributes: { 'http.request.method': 'GET', 'peer.service': 'pricing' },
    },
    trace.setSpan(context.active(), server),
  );
  const callee = pricing.startSpan(
    'GET /price',
    {
      kind: SpanKind.SERVER,
      startTime: at + 2,
      attributes: { 'http.request.method': 'GET', 'http.route': '/price' },
    },
    trace.setSpan(context.active(), client),
  );
  callee.end(at + 2 + calleeMs);
  client.end(at + 1 + clientMs);
  server.end(at + serverMs);
  return {
    traceId: server.spanContext().traceId,
    startMs: at,
    host,
    flag,
    serverMs,
    clientMs,
    calleeMs,
  };
}

async function cartSeries(): Promise<string> {
  const list = (await (
    await fetch(`${server.url}/api/v1/series?service=shop&view=server`)
  ).json()) as SeriesList;
  expect(list.series).toHaveLength(1);
  return list.series[0]!.id;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startTestServer({ env: { ONSET_TRACE_URL_TEMPLATE: TEMPLATE } }),
    launchChromium(),
  ]);
  const shops = ['shop-1', 'shop-2'].map((host) => ({
    host,
    ...provider({
      'service.name': 'shop',
      'host.name': host,
      'os.version': host === 'shop-2' ? '6.8.0-45' : '6.1.0-13',
    }),
  }));
  const pricing = provider({ 'service.name': 'pricing', 'host.name': 'pricing-1' });
  let i = 0;
  // The window, and the same window a day earlier (faster: a 4 ms callee floor instead of 10).
  for (const [shift, base] of [
    [0, 10],
    [DAY, 4],
  ] as const)
    for (let at = startMs - shift; at < endMs - shift; at += 15_000)
      for (const shop of shops) {
        const c = call(shop.tracer, pricing.tracer, at + 500, shop.host, i++, base);
        if (shift === 0) sent.push(c);
      }
  for (const p of [...shops.map((x) => x.p), pricing.p]) {
    await p.forceFlush();
    await p.shutdown();
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${e.name}: ${e.message}`));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Drag on a chart's plot area between two points given as fractions of its box. */
async function drag(chartId: string, from: [number, number], to: [number, number]) {
  const area = page.getByTestId(`chart-${chartId}`).getByTestId('plot-area');
  await area.scrollIntoViewIfNeeded();
  const plot = (await area.boundingBox())!;
  await page.mouse.move(plot.x + plot.width * from[0], plot.y + plot.height * from[1]);
  await page.mouse.down();
  await page.mouse.move(plot.x + plot.width * to[0], plot.y + plot.height * to[1], { steps: 8 });
  await page.mouse.up();
}

/** The calls the URL's selection designates, from what was sent. */
function expectedSplit(url: URL, wholeMinutes = false) {
  let selFrom = url.searchParams.has('sel_from')
    ? Date.parse(url.searchParams.get('sel_from')!)
    : startMs;
  let selTo = url.searchParams.has('sel_to') ? Date.parse(url.searchParams.get('sel_to')!) : endMs;
  // Every stored call is counted by start minute: the selection widened to whole minutes.
  if (wholeMinutes) {
    selFrom = Math.floor(selFrom / 60_000) * 60_000;
    selTo = Math.ceil(selTo / 60_000) * 60_000;
  }
  const min = url.searchParams.has('min_ms') ? Number(url.searchParams.get('min_ms')) : -Infinity;
  const max = url.searchParams.has('max_ms') ? Number(url.searchParams.get('max_ms')) : Infinity;
  const inSel = (c: Sent) =>
    c.startMs >= Math.max(selFrom, startMs) &&
    c.startMs < Math.min(selTo, endMs) &&
    c.serverMs >= min &&
    c.serverMs < max;
  return { selected: sent.filter(inSel), rest: sent.filter((c) => !inSel(c)) };
}

async function countsShown(testId = 'compare-counts') {
  const counts = page.getByTestId(testId);
  await counts.waitFor();
  return {
    selected: Number(await counts.getAttribute('data-selected')),
    rest: Number(await counts.getAttribute('data-rest')),
  };
}

describe('drill-down on the Explorer', () => {
  let explorerUrl = '';

  it('a box on the heatmap compares the slow calls with the rest, as sent', async () => {
    const id = await cartSeries();
    explorerUrl = `${server.url}/explorer?series=${id}&from=${iso(startMs)}&to=${iso(endMs)}`;
    await page.goto(explorerUrl);
    await page.getByTestId('chart-heatmap').getByTestId('plot-area').waitFor();
    await page.getByTestId('drag-compare').click();
    await page.waitForURL(/drag=compare/);
    // From near the top right down to 40% of the height, across the last quarter of the window.
    await drag('heatmap', [0.99, 0.02], [0.74, 0.4]);
    await page.waitForURL(/min_ms=/);
    const url = new URL(page.url());
    const want = expectedSplit(url);
    // The box holds slow calls only (200+ ms), all of them shop-2's with the new flag.
    expect(want.selected.length).toBeGreaterThan(5);
    expect(want.selected.every((c) => c.serverMs >= 200)).toBe(true);
    expect(await countsShown()).toEqual({
      selected: want.selected.length,
      rest: want.rest.length,
    });
    // Every stored call, by whole minutes, as sent.
    const whole = expectedSplit(url, true);
    expect(await countsShown('compare-all-calls')).toEqual({
      selected: whole.selected.length,
      rest: whole.rest.length,
    });
    // The row of host.name = shop-2 says how many calls each side has with it.
    const row = page.locator(
      '[data-testid="selection-lifts"] tr[data-key="host.name"][data-value="shop-2"]',
    );
    const onShop2 = want.rest.filter((c) => c.host === 'shop-2').length;
    await expect
      .poll(() => row.getByTestId('lift-counts').textContent())
      .toBe(`${want.selected.length} / ${onShop2}`);
    // The page's numbers are the API's for the same selection.
    const q = new URLSearchParams({
      from: String(startMs),
      to: String(endMs),
      ...Object.fromEntries(
        ['sel_from', 'sel_to', 'min_ms', 'max_ms']
          .filter((k) => url.searchParams.has(k))
          .map((k) => [
            k,
            k.startsWith('sel')
              ? String(Date.parse(url.searchParams.get(k)!))
              : url.searchParams.get(k)!,
          ]),
      ),
    });
    const api = (await (
      await fetch(`${server.url}/api/v1/series/${id}/compare?${q}`)
    ).json()) as SelectionCompare;
    expect(api.calls).toEqual({ selected: want.selected.length, rest: want.rest.length });
    expect(pageErrors).toEqual([]);
  });

  it("a selected call's trace id opens its spans, with the trace viewer's link", async () => {
    const link = page.getByTestId('compare-exemplars').getByTestId('trace-link').first();
    const href = (await link.getAttribute('href'))!;
    const traceId = /\/traces\/([0-9a-f]{32})/.exec(href)![1]!;
    const c = sent.find((x) => x.traceId === traceId)!;
    expect(c, traceId).toBeDefined();
    await link.click();
    await page.waitForURL(new RegExp(`/traces/${traceId}`));
    const rows = page.getByTestId('trace-span');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await page.getByTestId('span-service').allTextContents()).toEqual([
      'shop',
      'shop',
      'pricing',
    ]);
    expect(await page.getByTestId('span-kind').allTextContents()).toEqual([
      'server',
      'client',
      'server',
    ]);
    expect(await page.getByTestId('span-duration').allTextContents()).toEqual(
      [c.serverMs, c.clientMs, c.calleeMs].map((ms) => formatLatencyMs(ms)),
    );
    expect(
      await page.getByTestId('trace-facts').getByTestId('trace-viewer-link').getAttribute('href'),
    ).toBe(`http://viewer.example:16686/trace/${traceId}`);
    // A span's attributes, as sent.
    await rows.first().getByRole('button').click();
    const attrs = page.getByTestId('span-attributes');
    await expect.poll(() => attrs.textContent()).toContain(`app.flag${c.flag}`);
    expect(await attrs.textContent()).toContain('os.version6.8.0-45');
    expect(pageErrors).toEqual([]);
  });

  it('a range dragged on the quantiles compares that period with the rest', async () => {
    await page.goto(`${explorerUrl}&drag=compare`);
    await page.getByTestId('chart-quantiles').getByTestId('plot-area').waitFor();
    await drag('quantiles', [0.76, 0.5], [0.999, 0.5]);
    await page.waitForURL(/sel_from=/);
    const url = new URL(page.url());
    expect(url.searchParams.has('min_ms')).toBe(false);
    const want = expectedSplit(url);
    expect(want.selected.length).toBeGreaterThan(10);
    expect(await countsShown()).toEqual({
      selected: want.selected.length,
      rest: want.rest.length,
    });
    const flagRow = page.locator(
      '[data-testid="selection-lifts"] tr[data-key="app.flag"][data-value="new-pricing"]',
    );
    await expect
      .poll(() => flagRow.getByTestId('lift-counts').textContent())
      .toBe(
        `${want.selected.filter((c) => c.flag === 'new-pricing').length} / ${want.rest.filter((c) => c.flag === 'new-pricing').length}`,
      );
    await page.getByTestId('compare-clear').click();
    await expect.poll(() => page.getByTestId('compare-panel').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('the overlay draws the same window a day earlier, its value the API’s', async () => {
    const id = await cartSeries();
    await page.goto(explorerUrl);
    await page.getByTestId('chart-quantiles').getByTestId('plot-area').waitFor();
    const legend = page.getByTestId('chart-quantiles').locator('.chart-legend');
    expect(await legend.textContent()).not.toContain('a day earlier');
    await page.getByTestId('overlay-select').selectOption('1d');
    await page.waitForURL(/overlay=1d/);
    const earlier = (await (
      await fetch(
        `${server.url}/api/v1/series/${id}/quantiles?from=${startMs - DAY}&to=${endMs - DAY}&step=1m&q=0.5,0.99&layout=columns`,
      )
    ).json()) as QuantilesColumns;
    const p50 = earlier.columns.q['0.5']!;
    expect(p50.length).toBe(40);
    const last = p50[p50.length - 1]!;
    const item = legend.locator('.legend-item', { hasText: 'p50 a day earlier' });
    await expect.poll(() => item.locator('b').textContent()).toBe(formatLatencyMs(last));
    // The day-earlier window was faster: its line sits under today's.
    const today = legend.locator('.legend-item', { hasText: /^p50 / }).first();
    expect(await today.locator('b').textContent()).not.toBe(formatLatencyMs(last));
    await page.getByTestId('overlay-select').selectOption('');
    await expect.poll(() => legend.textContent()).not.toContain('a day earlier');
    expect(pageErrors).toEqual([]);
  });

  it("the regression page's example calls open their trace", async () => {
    const detect = await fetch(`${server.url}/api/v1/detect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(detect.status, await detect.text()).toBe(200);
    const { regressions } = (await (await fetch(`${server.url}/api/v1/regressions`)).json()) as {
      regressions: Regression[];
    };
    // The step on shop-2's calls to pricing: shop's GET /cart, or its edge's or pricing's series
    // as the incident's headline.
    const r = regressions.find((x) => x.name === 'GET /cart') ?? regressions[0];
    expect(r, 'a regression of the step').toBeDefined();
    const evidence = (await (
      await fetch(`${server.url}/api/v1/regressions/${r!.id}/evidence`)
    ).json()) as Evidence;
    const after = evidence.exemplars.after[0]!;
    await page.goto(`${server.url}/regressions/${r!.id}`);
    // Its chart overlays the same window a day earlier too (the page wrote its window in the URL).
    await page.waitForURL(/from=/);
    const win = new URL(page.url()).searchParams;
    await page.getByTestId('overlay-select').selectOption('1d');
    const shifted = (t: string) => String(parseTime(t, Date.now()) - DAY);
    const api = (await (
      await fetch(
        `${server.url}/api/v1/series/${r!.series_id}/quantiles?from=${shifted(win.get('from')!)}&to=${shifted(win.get('to')!)}&q=0.5,0.99&layout=columns`,
      )
    ).json()) as QuantilesColumns;
    expect(api.columns, `${win.toString()} ${JSON.stringify(api)}`).toBeDefined();
    const p50 = api.columns.q['0.5']!.filter((v) => v > 0);
    expect(p50.length).toBeGreaterThan(5);
    const item = page
      .getByTestId('chart-regression')
      .locator('.legend-item', { hasText: 'p50 a day earlier' });
    await expect.poll(() => item.locator('b').textContent()).toBe(formatLatencyMs(p50.at(-1)!));
    const link = page.locator(`[data-testid="exemplars"] a[href*="/traces/${after.trace_id}"]`);
    await link.first().click();
    await page.waitForURL(new RegExp(`/traces/${after.trace_id}`));
    const c = sent.find((x) => x.traceId === after.trace_id)!;
    await expect.poll(() => page.getByTestId('trace-span').count()).toBe(3);
    expect(await page.getByTestId('span-duration').allTextContents()).toEqual(
      [c.serverMs, c.clientMs, c.calleeMs].map((ms) => formatLatencyMs(ms)),
    );
    expect(pageErrors).toEqual([]);
  });
});
