/**
 * A silence is seen wherever its alert or regression is, in Chromium against
 * a real server and embedded PostgreSQL: made from the regression page, it is
 * confirmed there; the regression header, its row on the overview and its
 * alert's page then say until when, by whom and why, each exactly as the API
 * reports the silence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Alert, Regression, Silence } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Batch, post } from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient } from './fixtures/api.ts';

const MIN = 60_000;
let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let regression: Regression;
const api = apiClient(() => server.url);

/** An hour of 10 ms builder spawns, then 40 minutes at 200 ms: a ×20 step, alerted. */
async function sendStep(): Promise<void> {
  const end = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
  const onset = end - 40 * MIN;
  const batch = new Batch();
  const resource = { 'service.name': 'quietly', 'host.name': 'node-1' };
  for (let m = onset - 60 * MIN; m < end; m += MIN)
    for (let k = 0; k < 30; k++)
      batch.span(resource, 'spawn', 'internal', m + k * 2000, m < onset ? 10 : 200, {
        'process.executable.name': 'builder',
      });
  await post(`${server.otlpUrl}/v1/traces`, batch.body());
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  await sendStep();
  await api('/api/v1/detect', {});
  const list = await api<{ regressions: Regression[] }>('/api/v1/regressions?service=quietly');
  expect(list.regressions).toHaveLength(1);
  regression = list.regressions[0]!;
  expect(regression.silence).toBeNull();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The silence as a note shows it: its id, its end, by whom and why. */
async function noteOf(where: ReturnType<Page['locator']>) {
  const note = where.getByTestId('silence-note');
  await note.waitFor();
  return {
    id: await note.getAttribute('data-silence-id'),
    active: await note.getAttribute('data-active'),
    until: await note.locator('time').getAttribute('datetime'),
    text: (await note.textContent()) ?? '',
  };
}

describe('a silence made from the regression page', () => {
  let silence: Silence;

  it('is confirmed where it was made, with the API’s end and author', async () => {
    await page.goto(`${server.url}/regressions/${regression.id}`);
    await page.getByLabel('Your name').fill('alice');
    await page.getByLabel('Comment').fill('rollback running');
    await page.getByLabel('Silence for').selectOption('4h');
    await page.getByRole('button', { name: 'Silence', exact: true }).click();
    const confirmation = page.getByTestId('silence-confirmation');
    await confirmation.waitFor();
    const { silences } = await api<{ silences: Silence[] }>('/api/v1/silences?active=true');
    expect(silences).toHaveLength(1);
    silence = silences[0]!;
    expect(silence).toMatchObject({
      service: 'quietly',
      op: 'spawn',
      created_by: 'alice',
      comment: 'rollback running',
    });
    expect(Date.parse(silence.ends_at) - Date.parse(silence.starts_at)).toBe(4 * 60 * MIN);
    expect(await confirmation.getAttribute('role')).toBe('status');
    expect(await confirmation.textContent()).toContain('Silenced quietly spawn until');
    expect(await confirmation.textContent()).toContain(`by alice (silence ${silence.id})`);
    expect(await confirmation.locator('time').getAttribute('datetime')).toBe(silence.ends_at);
  });

  it('the API shows it on the regression and on its alert', async () => {
    const ref = {
      id: silence.id,
      starts_at: silence.starts_at,
      ends_at: silence.ends_at,
      created_by: 'alice',
      comment: 'rollback running',
      active: true,
    };
    expect((await api<Regression>(`/api/v1/regressions/${regression.id}`)).silence).toEqual(ref);
    const { alerts } = await api<{ alerts: Alert[] }>(
      `/api/v1/alerts?regression_id=${regression.id}`,
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.silenced_by).toBe(silence.id);
    expect(alerts[0]!.silence).toEqual(ref);
  });

  it('the regression header says until when, by whom and why', async () => {
    const n = await noteOf(page.locator('.page-head'));
    expect(n).toMatchObject({ id: silence.id, active: 'true', until: silence.ends_at });
    expect(n.text).toMatch(/^🔕 silenced until .+ by alice: “rollback running”$/);
  });

  it('its overview row says it is silenced until then', async () => {
    await page.goto(`${server.url}/`);
    const n = await noteOf(page.locator(`li[data-regression-id="${regression.id}"]`));
    expect(n).toMatchObject({ id: silence.id, active: 'true', until: silence.ends_at });
  });

  it('its alert page says until when, by whom and why', async () => {
    const { alerts } = await api<{ alerts: Alert[] }>(
      `/api/v1/alerts?regression_id=${regression.id}`,
    );
    await page.goto(`${server.url}/alerts/${alerts[0]!.id}`);
    const n = await noteOf(page.locator('.page-head'));
    expect(n).toMatchObject({ id: silence.id, active: 'true', until: silence.ends_at });
    expect(n.text).toContain('by alice: ');
    expect(n.text).toContain('rollback running');
    expect(pageErrors).toEqual([]);
  });
});
