/**
 * The alerts inbox tells what really happened, in Chromium against a real
 * server on embedded PostgreSQL with two real loopback receivers: one that
 * takes every delivery (200) and one that refuses every one (503). Both log
 * each request they get. A regression and two SLO burns fire; two are
 * acknowledged at once from the inbox, two silenced at once; a silenced SLO
 * fires again (held, sent to nobody); the regression is resolved and
 * reopened (a new page, shown as reopened). After each step every receiver
 * mark the inbox shows (✓ delivered, ✗ failing, … not tried) equals what the
 * receivers logged for that alert, and "not paged: silenced" is shown only
 * for an alert nobody was sent. The overview at a 15-minute range pins the
 * reopened regression (it pages) and names both receivers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import type { Alert, AlertWithEvents, Regression, Silence } from '@onset/contract';
import { startTestServer, type TestServer, allowLoopbackWebhooks } from '@onset/testkit';
import { Batch, post } from '@onset/testkit/incidents';
import { launchChromium } from './fixtures/browser.ts';
import { apiClient, sendSpawnBurn } from './fixtures/api.ts';

const MIN = 60_000;
let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const api = apiClient(() => server.url);

/** One request a receiver logged: which alert, which event, when, and what it answered. */
interface Logged {
  alertId: string;
  status: string;
  at: number;
  answered: number;
}
interface Receiver {
  url: string;
  log: Logged[];
  close: () => Promise<void>;
}

async function receiver(answer: number): Promise<Receiver> {
  const log: Logged[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        status: string;
        alert: { id: string };
      };
      log.push({ alertId: body.alert.id, status: body.status, at: Date.now(), answered: answer });
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'down');
    });
  });
  srv.listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    log,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}

let ok: Receiver;
let bad: Receiver;
const hooks: Record<string, Receiver> = {};
let regression: Regression;
let sloA = '';
let sloB = '';
/** An SLO on the regressed series itself: its alert is burnt by the regression. */
let sloR = '';

/** An hour of 10 ms builder spawns, then 40 minutes at 200 ms: a ×20 step, paged. */
async function sendStep(): Promise<void> {
  const end = Math.floor(Date.now() / MIN) * MIN - 2 * MIN;
  const onset = end - 40 * MIN;
  const batch = new Batch();
  const resource = { 'service.name': 'relapse', 'host.name': 'node-1' };
  for (let m = onset - 60 * MIN; m < end; m += MIN)
    for (let k = 0; k < 30; k++)
      batch.span(resource, 'spawn', 'internal', m + k * 2000, m < onset ? 10 : 200, {
        'process.executable.name': 'builder',
      });
  await post(`${server.otlpUrl}/v1/traces`, batch.body());
}

/** Evaluate the SLOs and run the delivery pass (what the scheduler does each minute). */
const tick = () => api('/api/v1/slos/evaluate', {});
const firing = async () =>
  (await api<{ alerts: Alert[] }>('/api/v1/alerts?status=firing&limit=1000')).alerts;

beforeAll(async () => {
  allowLoopbackWebhooks();
  [server, browser, ok, bad] = await Promise.all([
    startTestServer(),
    launchChromium(),
    receiver(200),
    receiver(503),
  ]);
  for (const [name, rx] of [
    ['pager-ok', ok],
    ['pager-bad', bad],
  ] as const) {
    const w = await api<{ id: string }>('/api/v1/webhooks', {
      url: rx.url,
      format: 'json',
      name,
      min_severity: 'ticket',
    });
    hooks[w.id] = rx;
  }
  // The step is detected before the burns arrive, so they stay SLO alerts only.
  await sendStep();
  await api('/api/v1/detect', {});
  await Promise.all([
    sendSpawnBurn(server.otlpUrl, 'burner-a'),
    sendSpawnBurn(server.otlpUrl, 'burner-b'),
  ]);
  await new Promise((r) => setTimeout(r, 500)); // past the counting cursor's settle time
  const slo = (service: string) =>
    api<{ id: string }>('/api/v1/slos', {
      name: `${service} spawns`,
      service,
      op: 'spawn',
      threshold_ms: 100,
      objective: 0.99,
      window: '28d',
      alert_tiers: { page_6h: false, ticket_1d: false, ticket_3d: false },
    });
  sloA = (await slo('burner-a')).id;
  sloB = (await slo('burner-b')).id;
  sloR = (await slo('relapse')).id;
  await tick(); // fires both SLOs and delivers all three alerts' firing
  const list = await api<{ regressions: Regression[] }>('/api/v1/regressions?service=relapse');
  expect(list.regressions).toHaveLength(1);
  regression = list.regressions[0]!;
  const alerts = await firing();
  expect(alerts).toHaveLength(4);
  expect(alerts.every((a) => a.severity === 'page')).toBe(true);
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await ok?.close();
  await bad?.close();
});

const rowOf = (id: string) => page.locator(`tr[data-alert-id="${id}"]`);

/** What the receivers logged of one alert's firing, per webhook id: ✓, ✗ or … (nothing yet). */
function loggedMarks(alertId: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, rx] of Object.entries(hooks)) {
    const got = rx.log.filter((l) => l.alertId === alertId && l.status === 'firing');
    if (got.some((l) => l.answered < 300)) out[id] = '✓';
    else if (got.length) out[id] = '✗';
  }
  return out;
}

/** What the inbox row shows per receiver: webhook id → its mark. */
async function shownMarks(row: Locator): Promise<Record<string, string>> {
  const cells = await row
    .getByTestId('receivers')
    .locator('[data-webhook-id]')
    .evaluateAll((els) =>
      els.map((e) => [e.getAttribute('data-webhook-id')!, (e.textContent ?? '').trim().slice(-1)]),
    );
  const out: Record<string, string> = {};
  for (const [id, mark] of cells) if (mark !== '…') out[id!] = mark!;
  return out;
}

/** Every firing alert's row shows exactly what the receivers logged, and says loudly when nobody got it. */
async function expectInboxEqualsLogs(): Promise<Alert[]> {
  await page.goto(`${server.url}/alerts?from=now-15m&to=now`);
  const alerts = await firing();
  await page.getByTestId('alerts-inbox').waitFor();
  expect(await page.locator('tbody tr[data-alert-id]').count()).toBe(alerts.length);
  for (const a of alerts) {
    const row = rowOf(a.id);
    const logged = loggedMarks(a.id);
    expect(await shownMarks(row), `alert ${a.id}`).toEqual(logged);
    const reached = Object.values(logged).includes('✓');
    const heldBySilence = !a.notified && a.silenced_by !== null;
    expect(await row.getByTestId('nobody-reached').count(), `alert ${a.id}`).toBe(
      reached || heldBySilence ? 0 : 1,
    );
    expect(await row.getByTestId('not-paged-silenced').count(), `alert ${a.id}`).toBe(
      heldBySilence ? 1 : 0,
    );
  }
  return alerts;
}

describe('the inbox against what two real receivers logged', () => {
  it('four pages: each row’s ✓/✗ is what the receivers logged; an SLO alert names the regression burning it', async () => {
    const alerts = await expectInboxEqualsLogs();
    // Each alert was delivered to pager-ok and refused by pager-bad.
    for (const a of alerts) expect(Object.values(loggedMarks(a.id)).sort()).toEqual(['✓', '✗']);
    // The SLO alerts say which SLO; the regression's names it.
    const r = alerts.find((a) => a.regression_id === regression.id)!;
    expect(await rowOf(r.id).getByTestId('behind').textContent()).toBe(
      `regression ${regression.id}`,
    );
    // The SLO on the regressed series: burnt by that regression, on the inbox and its alert page.
    const burnt = alerts.find((a) => a.slo_id === sloR)!;
    const burning = rowOf(burnt.id).getByTestId('burning-regression');
    await expect.poll(() => burning.count()).toBe(1);
    expect(await burning.getByRole('link').getAttribute('href')).toMatch(
      new RegExp(`^/regressions/${regression.id}(\\?|$)`),
    );
    for (const a of alerts.filter((x) => x.slo_id && x.slo_id !== sloR))
      expect(await rowOf(a.id).getByTestId('burning-regression').count()).toBe(0);
    await page.goto(`${server.url}/alerts/${burnt.id}`);
    const fact = page.getByTestId('alert-burning-regressions');
    await fact.waitFor();
    expect(await fact.getByRole('link').textContent()).toContain(`regression ${regression.id}:`);
  });

  it('bulk actions are all or none: an unknown id changes nothing', async () => {
    const alerts = await firing();
    const send = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ids = [alerts[0]!.id, '999999999'];
    const ack = await send('/api/v1/alerts/ack', { ids, by: 'mallory' });
    expect(ack.status).toBe(404);
    expect(((await ack.json()) as { message: string }).message).toContain('alert 999999999');
    const silence = await send('/api/v1/alerts/silence', { ids, duration: '1h', comment: 'x' });
    expect(silence.status).toBe(404);
    const noEnd = await send('/api/v1/alerts/silence', { ids: [alerts[0]!.id], comment: 'x' });
    expect(noEnd.status).toBe(400);
    expect((await firing()).every((a) => a.acknowledged === null)).toBe(true);
    expect((await api<{ silences: Silence[] }>('/api/v1/silences')).silences).toEqual([]);
  });

  it('acknowledges two alerts at once from the keyboard; focus lands on the confirmation', async () => {
    const alerts = await firing();
    const r = alerts.find((a) => a.regression_id === regression.id)!;
    const a = alerts.find((x) => x.slo_id === sloA)!;
    const before = { ok: ok.log.length, bad: bad.log.length };
    await page.goto(`${server.url}/alerts`);
    await rowOf(r.id).waitFor();
    await page.getByLabel('Your name').fill('dana');
    for (const id of [r.id, a.id]) {
      await rowOf(id).getByTestId('select-alert').focus();
      await page.keyboard.press('Space');
    }
    expect(await page.getByTestId('selected-count').textContent()).toBe('2 selected');
    const button = page.getByRole('button', { name: 'Acknowledge selected' });
    for (let i = 0; i < 30; i++) {
      if (await button.evaluate((el) => el === document.activeElement)) break;
      await page.keyboard.press('Shift+Tab');
    }
    expect(await button.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    const done = page.getByTestId('bulk-done');
    await done.waitFor();
    expect(await done.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await done.textContent()).toContain(`Acknowledged 2 alerts as dana`);
    const now = await firing();
    for (const id of [r.id, a.id]) {
      expect(now.find((x) => x.id === id)!.acknowledged?.by).toBe('dana');
      await expect
        .poll(() => rowOf(id).getByTestId('acknowledged').textContent())
        .toMatch(/^by dana/);
    }
    expect(now.find((x) => x.slo_id === sloB)!.acknowledged).toBeNull();
    // The regression is acknowledged with its alert.
    const reg = await api<Regression>(`/api/v1/regressions/${regression.id}`);
    expect(reg.status).toBe('acknowledged');
    // An acknowledgement sends nothing: the refused receiver sees only retries of the firing.
    await tick();
    expect(ok.log.length).toBe(before.ok);
    expect(bad.log.slice(before.bad).every((l) => l.status === 'firing')).toBe(true);
    expect(await page.locator('[data-testid="selected-count"]').textContent()).toBe(
      'Select alerts to act on several at once',
    );
  });

  it('silences both SLOs at once: confirmed with the API’s silences; a new episode under it reaches nobody', async () => {
    const alerts = await firing();
    const a = alerts.find((x) => x.slo_id === sloA)!;
    const b = alerts.find((x) => x.slo_id === sloB)!;
    await page.goto(`${server.url}/alerts`);
    await rowOf(a.id).waitFor();
    await page.getByLabel('Your name').fill('erin');
    await page.getByLabel('Comment').fill('burner maintenance');
    await page.getByLabel('Silence for').selectOption('4h');
    await rowOf(a.id).getByTestId('select-alert').check();
    await rowOf(b.id).getByTestId('select-alert').check();
    await page.getByRole('button', { name: 'Silence selected' }).click();
    const done = page.getByTestId('bulk-done');
    await done.waitFor();
    expect(await done.evaluate((el) => el === document.activeElement)).toBe(true);
    const { silences } = await api<{ silences: Silence[] }>('/api/v1/silences?active=true');
    expect(silences.map((s) => s.slo_id).sort()).toEqual([sloA, sloB].sort());
    const confirmations = done.getByTestId('silence-confirmation');
    expect(await confirmations.count()).toBe(2);
    for (const s of silences) {
      expect(s.created_by).toBe('erin');
      expect(s.comment).toBe('burner maintenance');
      const c = done.locator(`[data-testid="silence-confirmation"]:has-text("silence ${s.id})")`);
      expect(await c.locator('time').getAttribute('datetime')).toBe(s.ends_at);
      const alert = s.slo_id === sloA ? a : b;
      const note = rowOf(alert.id).getByTestId('silence-note');
      await expect.poll(() => note.getAttribute('data-silence-id')).toBe(s.id);
      expect(await note.locator('time').getAttribute('datetime')).toBe(s.ends_at);
      expect(await note.textContent()).toContain('by erin: “burner maintenance”');
    }
    // B is resolved by hand; its SLO still burns, so it fires again, now under the silence.
    const logBefore = { ok: ok.log.length, bad: bad.log.length };
    await api(`/api/v1/alerts/${b.id}/resolve`, { by: 'erin', comment: 'try again' });
    await tick();
    const again = (await firing()).find((x) => x.slo_id === sloB)!;
    expect(again.id).not.toBe(b.id);
    expect(again.paging.state).toBe('silenced');
    expect(again.notified).toBe(false);
    // Its receivers were told B resolved, and nothing of the new episode.
    expect(ok.log.slice(logBefore.ok).map((l) => [l.alertId, l.status])).toEqual([
      [b.id, 'resolved'],
    ]);
    expect(bad.log.slice(logBefore.bad).some((l) => l.alertId === again.id)).toBe(false);
    await expectInboxEqualsLogs();
    expect(await rowOf(again.id).getByTestId('not-paged-silenced').textContent()).toBe(
      'not paged: silenced',
    );
  });

  it('a resolved regression reopened pages again, shows as reopened, and is dated after its resolve', async () => {
    const old = (await firing()).find((x) => x.regression_id === regression.id)!;
    const t0 = Date.now();
    await api(`/api/v1/regressions/${regression.id}/resolve`, {
      by: 'alice',
      comment: 'rolled back',
    });
    const t1 = Date.now();
    await tick();
    const resolvedLog = ok.log.find((l) => l.alertId === old.id && l.status === 'resolved')!;
    expect(resolvedLog).toBeDefined();
    const oldNow = await api<AlertWithEvents>(`/api/v1/alerts/${old.id}`);
    const resolvedAt = Date.parse(oldNow.resolved_at!);
    expect(resolvedAt).toBeGreaterThanOrEqual(t0 - 1000);
    expect(resolvedAt).toBeLessThanOrEqual(t1);
    const resolveNote = oldNow.notifications.find(
      (n) => n.event === 'resolved' && n.webhook_name === 'pager-ok',
    )!;
    // Delivered after the resolve, no earlier than the receiver logged it arriving.
    expect(Date.parse(resolveNote.delivered_at!)).toBeGreaterThanOrEqual(resolvedAt);
    expect(resolvedLog.at).toBeGreaterThanOrEqual(resolvedAt);
    const notified = oldNow.timeline.filter(
      (e) => e.kind === 'notified' && e.detail.event === 'resolved',
    );
    expect(notified.length).toBe(1);
    expect(Date.parse(notified[0]!.at)).toBeGreaterThanOrEqual(resolvedAt);

    await api(`/api/v1/regressions/${regression.id}/reopen`, {
      by: 'bob',
      comment: 'still slow after the rollback',
    });
    await tick();
    const fresh = (await firing()).find((x) => x.regression_id === regression.id)!;
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.reopened?.by).toBe('bob');
    expect(fresh.severity).toBe('page');
    expect(loggedMarks(fresh.id)).toEqual(
      Object.fromEntries(Object.entries(hooks).map(([id, rx]) => [id, rx === ok ? '✓' : '✗'])),
    );
    await expectInboxEqualsLogs();
    const row = rowOf(fresh.id);
    const reopened = row.getByTestId('reopened');
    expect(await reopened.getAttribute('title')).toBe(fresh.reopened!.at);
    expect(await reopened.textContent()).toContain('by bob: “still slow after the rollback”');
    // Its alert page says so too.
    await page.goto(`${server.url}/alerts/${fresh.id}`);
    await expect.poll(() => page.getByTestId('alert-reopened').count()).toBe(1);
    expect(await page.locator('[data-testid="timeline"] li[data-kind="reopened"]').count()).toBe(1);
  });

  it('the overview at a 15-minute range pins the paging regression and says who was reached', async () => {
    const fresh = (await firing()).find((x) => x.regression_id === regression.id)!;
    await page.goto(`${server.url}/?from=now-15m&to=now`);
    const row = page.locator(`li[data-regression-id="${regression.id}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-pinned')).toBe('paging');
    const badge = row.getByTestId('paging');
    const text = (await badge.textContent()) ?? '';
    // Both receivers, the failing one first, as the API has them.
    expect(text).toMatch(/delivery to pager-bad (failing since|gave up)/);
    expect(text).toMatch(/paged pager-ok at .+ ✓/);
    expect(fresh.paging.delivered).toBe(1);
    expect(pageErrors).toEqual([]);
  });
});
