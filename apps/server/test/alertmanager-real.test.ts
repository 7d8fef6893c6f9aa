/**
 * Onset against a real Prometheus Alertmanager behind HTTP basic auth, with a
 * real loopback receiver behind it logging what Alertmanager notifies:
 * - without credentials the webhook gets 401; with `auth: basic` it delivers,
 *   and no answer ever shows the password;
 * - `/test` fires, stays firing past group_wait (the receiver is notified of
 *   it firing), then resolves (the receiver is notified of the resolve);
 * - an Onset silence becomes an Alertmanager silence that suppresses the
 *   alert there, and ending it expires that silence; two alerts on one
 *   service and op silenced in one bulk call are both held by one silence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { raiseRegressionAlert } from '../src/regressions/alerting.ts';
import { syncAlertmanagerSilences } from '../src/webhooks/alertmanager-silences.ts';
import { api, onlyWebhook, startReceiver, type Receiver } from './slo-support.ts';
import {
  alertmanagerMissing,
  buildAlertmanager,
  startAlertmanager,
  type RunningAlertmanager,
} from './alertmanager-support.ts';

if (alertmanagerMissing) console.warn(`alertmanager-real.test.ts skipped: ${alertmanagerMissing}`);

let srv: TestServer;
let am: RunningAlertmanager;
let rx: Receiver;
let A: ReturnType<typeof api>;
const HOLD_MS = 3_000;

interface AmNotification {
  status: string;
  alerts: Array<{ status: string; labels: Record<string, string> }>;
}
const notified = (): AmNotification[] =>
  rx.requests.map((q) => q.json as AmNotification).filter((j) => Array.isArray(j?.alerts));

async function until<T>(what: string, f: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  if (alertmanagerMissing) return;
  process.env.ONSET_ALERTMANAGER_TEST_HOLD = `${HOLD_MS}ms`;
  const [bin, s, r] = await Promise.all([buildAlertmanager(), startTestServer(), startReceiver()]);
  srv = s;
  rx = r;
  A = api(srv.url);
  am = await startAlertmanager({ bin, receiverUrl: `${rx.url}/am` });
}, 900_000);

afterAll(async () => {
  await am?.stop();
  await srv?.close();
  await rx?.close();
});

describe.skipIf(alertmanagerMissing)('a real Alertmanager behind basic auth', () => {
  let id: string;

  it('refuses a webhook without credentials (401) and takes one with auth: basic', async () => {
    id = await onlyWebhook(A, { url: am.url, format: 'alertmanager', name: 'am' });
    const bare = await A.post(`/api/v1/webhooks/${id}/test`, {});
    expect(bare.body).toMatchObject({ status: 'failed', last_status_code: 401 });

    const put = await A.put(`/api/v1/webhooks/${id}`, {
      auth: { type: 'basic', username: am.user, password: am.password },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    for (const body of [
      put.body,
      (await A.get(`/api/v1/webhooks/${id}`)).body,
      (await A.get('/api/v1/webhooks')).body,
    ]) {
      expect(JSON.stringify(body)).not.toContain(am.password);
    }
    expect(put.body.auth).toEqual({ type: 'basic', username: am.user });
    // A header Onset sets itself cannot be a custom one.
    const bad = await A.put(`/api/v1/webhooks/${id}`, {
      auth: { type: 'header', name: 'X-Onset-Event', value: 'x' },
    });
    expect(bad.status).toBe(400);
  });

  it('/test fires, holds past group_wait so the receiver sees it firing, then resolves', async () => {
    rx.requests.length = 0;
    const t0 = Date.now();
    const t = await A.post(`/api/v1/webhooks/${id}/test`, {});
    // Not resolved before the hold is over.
    expect(
      (await runDeliveryPass(srv.onset.pool, { baseUrl: srv.url, now: t0 + HOLD_MS - 500 }))
        .attempted,
    ).toBe(0);
    expect(t.body).toMatchObject({ event: 'test', status: 'delivered', last_status_code: 200 });
    const alerts = await am.get('/api/v2/alerts?filter=alertname%3D%22OnsetTest%22');
    expect(alerts).toHaveLength(1);
    expect(alerts[0].status.state).toBe('active');
    // Alertmanager notifies its receiver of it firing once group_wait is over…
    const firing = await until('the receiver notified of the test firing', () =>
      notified().find(
        (n) => n.status === 'firing' && n.alerts[0]?.labels.alertname === 'OnsetTest',
      ),
    );
    expect(firing.alerts[0]!.labels.dedup_key).toBe(alerts[0].labels.dedup_key);
    // …and the resolve waits for the hold to be over.
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + HOLD_MS + 100 - Date.now())));
    // …then the outbox sends the resolve and Alertmanager tells its receiver.
    expect(await runDeliveryPass(srv.onset.pool, { baseUrl: srv.url })).toMatchObject({
      delivered: 1,
      failed: 0,
    });
    const resolved = await until('the receiver notified of the test resolved', () =>
      notified().find(
        (n) => n.status === 'resolved' && n.alerts[0]?.labels.alertname === 'OnsetTest',
      ),
    );
    expect(resolved.alerts[0]!.labels.dedup_key).toBe(firing.alerts[0]!.labels.dedup_key);
    const log = (await A.get(`/api/v1/webhooks/${id}/deliveries?limit=2`)).body.deliveries;
    expect(log.map((d: { event: string; status: string }) => `${d.event}:${d.status}`)).toEqual([
      'resolved:delivered',
      'test:delivered',
    ]);
  });

  it('an Onset silence suppresses the alert in Alertmanager; ending it expires that silence', async () => {
    const T = Date.now();
    await raiseRegressionAlert(
      srv.onset.pool,
      {
        id: 'am-real-1',
        service: 'checkout',
        op: 'request',
        view: 'server',
        name: 'GET /basket',
        peer: null,
        before: { p50_ms: 2.1, p99_ms: 4.0, count: 50_000 },
        after: { p50_ms: 21.0, p99_ms: 60.0, count: 9_000 },
        ratio_p50: 10,
        ratio_p99: 15,
      },
      { now: T },
    );
    expect(await runDeliveryPass(srv.onset.pool, { baseUrl: srv.url })).toMatchObject({
      delivered: 1,
    });
    const inAm = async () =>
      (await am.get('/api/v2/alerts?filter=service%3D%22checkout%22')) as Array<{
        status: { state: string; silencedBy: string[] };
      }>;
    expect((await inAm())[0]!.status.state).toBe('active');

    const made = await A.post('/api/v1/silences', {
      service: 'checkout',
      duration: '2h',
      comment: 'deploy rollback under way',
      created_by: 'ana',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // The route syncs in the background; the silence appears in Alertmanager and holds the alert.
    const amSilence = await until('the Alertmanager silence', async () =>
      ((await am.get('/api/v2/silences')) as any[]).find(
        (s) =>
          s.comment.startsWith(`Onset silence ${made.body.id}:`) && s.status.state === 'active',
      ),
    );
    expect(amSilence.createdBy).toBe('ana');
    expect(Date.parse(amSilence.endsAt)).toBe(Date.parse(made.body.ends_at));
    expect(amSilence.matchers).toEqual(
      expect.arrayContaining([
        { name: 'service', value: 'checkout', isRegex: false, isEqual: true },
        { name: 'alertname', value: 'Onset.+', isRegex: true, isEqual: true },
      ]),
    );
    const held = await until('the alert suppressed', async () => {
      const a = (await inAm())[0]!;
      return a.status.state === 'suppressed' ? a : undefined;
    });
    expect(held.status.silencedBy).toEqual([amSilence.id]);
    // A second pass finds nothing to do (no duplicate silence).
    expect(await syncAlertmanagerSilences(srv.onset.pool, { timeoutMs: 5000 })).toMatchObject({
      created: 0,
      expired: 0,
      failed: 0,
    });

    expect((await A.del(`/api/v1/silences/${made.body.id}`)).status).toBe(200);
    await until('the Alertmanager silence expired', async () =>
      ((await am.get(`/api/v2/silence/${amSilence.id}`)) as any).status.state === 'expired'
        ? true
        : undefined,
    );
    await until('the alert active again', async () =>
      (await inAm())[0]!.status.state === 'active' ? true : undefined,
    );
    const all = (await am.get('/api/v2/silences')) as Array<{ status: { state: string } }>;
    expect(all.filter((s) => s.status.state === 'active')).toEqual([]);
  });

  it('two alerts on the same service and op silenced in one bulk call: one silence holds both there', async () => {
    const T = Date.now();
    const raise = (id: string, name: string) =>
      raiseRegressionAlert(
        srv.onset.pool,
        {
          id,
          service: 'ledger',
          op: 'request',
          view: 'server',
          name,
          peer: null,
          before: { p50_ms: 2.1, p99_ms: 4.0, count: 50_000 },
          after: { p50_ms: 21.0, p99_ms: 60.0, count: 9_000 },
          ratio_p50: 10,
          ratio_p99: 15,
        },
        { now: T },
      );
    await raise('am-bulk-1', 'GET /entries');
    await raise('am-bulk-2', 'POST /entries');
    // (the earlier checkout alert may be re-sent in the same pass)
    const sent = await runDeliveryPass(srv.onset.pool, { baseUrl: srv.url });
    expect([sent.delivered >= 2, sent.failed]).toEqual([true, 0]);
    const inAm = async () =>
      (await am.get('/api/v2/alerts?filter=service%3D%22ledger%22')) as Array<{
        labels: Record<string, string>;
        status: { state: string; silencedBy: string[] };
      }>;
    expect((await inAm()).map((a) => a.status.state)).toEqual(['active', 'active']);
    const ids = (await A.get('/api/v1/alerts?service=ledger&status=firing')).body.alerts.map(
      (a: { id: string }) => a.id,
    );
    expect(ids).toHaveLength(2);
    const made = await A.post('/api/v1/alerts/silence', {
      ids,
      duration: '1h',
      comment: 'ledger migration',
      created_by: 'ana',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.silences).toHaveLength(1);
    const onset = made.body.silences[0];
    const amSilence = await until('the Alertmanager silence', async () =>
      ((await am.get('/api/v2/silences')) as any[]).find(
        (s) => s.comment.startsWith(`Onset silence ${onset.id}:`) && s.status.state === 'active',
      ),
    );
    expect(amSilence.matchers).toEqual(
      expect.arrayContaining([
        { name: 'service', value: 'ledger', isRegex: false, isEqual: true },
        { name: 'op', value: 'request', isRegex: false, isEqual: true },
      ]),
    );
    // Both alerts suppressed there by that one silence; Onset made no second.
    const held = await until('both alerts suppressed', async () => {
      const a = await inAm();
      return a.length === 2 && a.every((x) => x.status.state === 'suppressed') ? a : undefined;
    });
    for (const a of held) expect(a.status.silencedBy).toEqual([amSilence.id]);
    const mine = ((await am.get('/api/v2/silences')) as any[]).filter(
      (s) => s.comment.startsWith(`Onset silence ${onset.id}:`) && s.status.state === 'active',
    );
    expect(mine).toHaveLength(1);
    expect((await A.del(`/api/v1/silences/${onset.id}`)).status).toBe(200);
    await until('the Alertmanager silence expired', async () =>
      ((await am.get(`/api/v2/silence/${amSilence.id}`)) as any).status.state === 'expired'
        ? true
        : undefined,
    );
  });

  it('passes that overlap (the route’s, the minute’s, another server’s) make each silence once', async () => {
    const made = await A.post('/api/v1/silences', {
      service: 'inventory',
      duration: '1h',
      comment: 'overlapping passes',
      created_by: 'ana',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // The route's own background pass is running too; three more start at once.
    const passes = await Promise.all(
      [0, 1, 2].map(() => syncAlertmanagerSilences(srv.onset.pool, { timeoutMs: 5000 })),
    );
    expect(passes.map((p) => p.failed)).toEqual([0, 0, 0]);
    await until('every pass done', async () =>
      (await syncAlertmanagerSilences(srv.onset.pool, { timeoutMs: 5000 })).created === 0
        ? true
        : undefined,
    );
    const mine = ((await am.get('/api/v2/silences')) as any[]).filter(
      (s) => s.comment.startsWith(`Onset silence ${made.body.id}:`) && s.status.state === 'active',
    );
    expect(mine).toHaveLength(1);
    expect((await A.del(`/api/v1/silences/${made.body.id}`)).status).toBe(200);
    await until('the Alertmanager silence expired', async () =>
      ((await am.get(`/api/v2/silence/${mine[0].id}`)) as any).status.state === 'expired'
        ? true
        : undefined,
    );
  });
});
