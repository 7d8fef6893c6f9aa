/**
 * POST /api/v1/alerts/silence with two alerts on the same target, on a real
 * server (embedded PostgreSQL) with a real loopback receiver logging every
 * delivery:
 * - the page and ticket tiers of one SLO (both slo_id = the SLO);
 * - two regressions of one service and op (two executables' spawns, steps an
 *   hour apart: two incidents, two alerts, one service+op matcher).
 * Each call makes one silence for the shared matcher, both alerts name it
 * (silenced_by, one `silenced` event each, the alert page's silence), the
 * regressions show it, and the receiver gets nothing more of either while it
 * holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runSloPass } from '../src/slos/evaluate.ts';
import { runDeliveryPass } from '../src/webhooks/deliver.ts';
import { MIN, api, sendSpans, startReceiver, traffic, type Receiver } from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
let rx: Receiver;
const M0 = Math.floor(Date.now() / MIN) * MIN;
const at = (minutesFromM0: number) => M0 + minutesFromM0 * MIN;
const deliver = () =>
  runDeliveryPass(srv.onset.pool, {
    now: Date.now() + 10 * MIN,
    baseUrl: srv.url,
    timeoutMs: 2000,
  });
/** What the receiver logged for one alert: its events, in order. */
const loggedFor = (alertId: string) =>
  rx.requests.filter((r) => r.json?.alert?.id === alertId).map((r) => r.json.status as string);

interface AlertJson {
  id: string;
  status: string;
  slo_id: string | null;
  regression_id: string | null;
  service: string | null;
  op: string | null;
  severity: string;
  notified: boolean;
  silenced_by: string | null;
  silence: { id: string; ends_at: string; created_by: string | null; comment: string } | null;
  paging: { state: string; silenced_by: string | null };
}

beforeAll(async () => {
  [srv, rx] = await Promise.all([startTestServer(), startReceiver()]);
  A = api(srv.url);
  const w = await A.post('/api/v1/webhooks', {
    url: rx.url,
    format: 'json',
    name: 'pager',
    min_severity: 'ticket',
  });
  expect(w.status, JSON.stringify(w.body)).toBe(201);
});

afterAll(async () => {
  await srv?.close();
  await rx?.close();
});

/** One bulk silence of `ids`; its answer checked: one silence, every alert held by it. */
async function silenceBoth(ids: string[], comment: string) {
  const r = await A.post('/api/v1/alerts/silence', {
    ids,
    duration: '2h',
    comment,
    created_by: 'erin',
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const silences = r.body.silences as Array<{ id: string; ends_at: string }>;
  expect(silences).toHaveLength(1);
  const s = silences[0]!;
  expect((r.body.alerts as AlertJson[]).map((a) => a.id)).toEqual(ids);
  for (const a of r.body.alerts as AlertJson[]) {
    expect(a.silenced_by, `alert ${a.id}`).toBe(s.id);
    expect(a.silence).toMatchObject({ id: s.id, ends_at: s.ends_at, created_by: 'erin', comment });
  }
  // Each alert's own page says the same, and its history has one silenced event naming it.
  for (const id of ids) {
    const one = (await A.get(`/api/v1/alerts/${id}`)).body as AlertJson & {
      events: Array<{ kind: string; actor: string | null; detail: { silence_id?: string } }>;
    };
    expect(one.silenced_by).toBe(s.id);
    expect(one.silence?.id).toBe(s.id);
    const silenced = one.events.filter((e) => e.kind === 'silenced');
    expect(silenced.map((e) => [e.detail.silence_id, e.actor])).toEqual([[s.id, 'erin']]);
  }
  return s;
}

describe('two alerts on the same target, silenced in one call', () => {
  it('the page and ticket tiers of one SLO: one silence by SLO, both held, nothing more sent', async () => {
    await sendSpans(
      srv.otlpUrl,
      traffic(at(-5), at(0), 30, 800_000, { service: 'indexer', spanName: 'fsync' }),
    );
    const slo = await A.post('/api/v1/slos', {
      name: 'indexer fsync',
      service: 'indexer',
      op: 'fsync',
      threshold_ms: 100,
      objective: 0.99,
      window: '30d',
    });
    expect(slo.status).toBe(201);
    const p = await runSloPass(srv.onset.pool, { now: at(0) + 30_000, settleMs: 0 });
    expect(
      p.fired
        .filter((f) => f.slo_id === slo.body.id)
        .map((f) => f.severity)
        .sort(),
    ).toEqual(['page', 'ticket']);
    await deliver();
    const alerts = (await A.get(`/api/v1/alerts?slo_id=${slo.body.id}&status=firing`)).body
      .alerts as AlertJson[];
    expect(alerts).toHaveLength(2);
    for (const a of alerts) expect(loggedFor(a.id)).toEqual(['firing']);

    const s = await silenceBoth(
      alerts.map((a) => a.id),
      'indexer disk swap',
    );
    const listed = (await A.get('/api/v1/silences?active=true')).body.silences;
    expect(listed.map((x: { id: string; slo_id: string | null }) => [x.id, x.slo_id])).toEqual([
      [s.id, slo.body.id],
    ]);
    // Still burning a minute later: nothing new fires, nothing more reaches the receiver.
    const sent = rx.requests.length;
    await runSloPass(srv.onset.pool, { now: at(1) + 30_000, settleMs: 0 });
    await deliver();
    expect(rx.requests.slice(sent).map((r) => r.json?.alert?.slo_id)).not.toContain(slo.body.id);
    const still = (await A.get(`/api/v1/alerts?slo_id=${slo.body.id}&status=firing`)).body
      .alerts as AlertJson[];
    expect(still.map((a) => [a.id, a.silenced_by, a.paging.silenced_by]).sort()).toEqual(
      alerts.map((a) => [a.id, s.id, s.id]).sort(),
    );
    // The page tier resolved by hand fires again (it still burns), under the same silence.
    const page = alerts.find((a) => a.severity === 'page')!;
    expect((await A.post(`/api/v1/alerts/${page.id}/resolve`, { by: 'erin' })).status).toBe(200);
    await runSloPass(srv.onset.pool, { now: at(2) + 30_000, settleMs: 0 });
    await deliver();
    const again = (
      (await A.get(`/api/v1/alerts?slo_id=${slo.body.id}&status=firing`)).body.alerts as AlertJson[]
    ).find((a) => a.severity === 'page')!;
    expect(again.id).not.toBe(page.id);
    expect([again.silenced_by, again.notified]).toEqual([s.id, false]);
    expect(loggedFor(page.id)).toEqual(['firing', 'resolved']);
    expect(loggedFor(again.id)).toEqual([]);
  });

  it('two regressions of one service and op: one silence by service and op, both held and shown', async () => {
    // builder's spawns step ×20 100 minutes ago, linker's 30 minutes ago: two incidents.
    const end = at(-2);
    const spans = [
      ...traffic(end - 220 * MIN, end - 100 * MIN, 30, 10_000, {
        service: 'relapse',
        executable: 'builder',
      }),
      ...traffic(end - 100 * MIN, end, 30, 200_000, { service: 'relapse', executable: 'builder' }),
      ...traffic(end - 220 * MIN, end - 30 * MIN, 30, 10_000, {
        service: 'relapse',
        executable: 'linker',
      }),
      ...traffic(end - 30 * MIN, end, 30, 200_000, { service: 'relapse', executable: 'linker' }),
    ];
    await sendSpans(srv.otlpUrl, spans);
    expect((await A.post('/api/v1/detect', {})).status).toBe(200);
    const regs = (await A.get('/api/v1/regressions?service=relapse')).body.regressions as Array<{
      id: string;
      name: string;
      op: string;
      silence: { id: string } | null;
    }>;
    expect(regs.map((r) => r.name).sort()).toEqual(['builder', 'linker']);
    await deliver();
    const alerts = (await A.get('/api/v1/alerts?status=firing&limit=1000')).body.alerts.filter(
      (a: AlertJson) => regs.some((r) => r.id === a.regression_id),
    ) as AlertJson[];
    expect(alerts).toHaveLength(2);
    expect(new Set(alerts.map((a) => `${a.service}/${a.op}`))).toEqual(new Set(['relapse/spawn']));
    for (const a of alerts) expect(loggedFor(a.id)).toEqual(['firing']);

    const s = await silenceBoth(
      alerts.map((a) => a.id),
      'relapse builders known slow',
    );
    const mine = (await A.get('/api/v1/silences?active=true')).body.silences.filter(
      (x: { service: string | null }) => x.service === 'relapse',
    );
    expect(mine.map((x: { id: string; op: string | null }) => [x.id, x.op])).toEqual([
      [s.id, 'spawn'],
    ]);
    // Both regressions show the silence, in the list and on their own page.
    const listed = (await A.get('/api/v1/regressions?service=relapse')).body.regressions as Array<{
      id: string;
      silence: { id: string } | null;
    }>;
    for (const r of regs) {
      expect(listed.find((x) => x.id === r.id)!.silence?.id).toBe(s.id);
      expect((await A.get(`/api/v1/regressions/${r.id}`)).body.silence?.id).toBe(s.id);
    }
    // builder's regression resolved and reopened: a new episode on the same target, held by it.
    const builder = regs.find((r) => r.name === 'builder')!;
    const old = alerts.find((a) => a.regression_id === builder.id)!;
    for (const step of ['resolve', 'reopen'])
      expect(
        (await A.post(`/api/v1/regressions/${builder.id}/${step}`, { by: 'erin' })).status,
      ).toBe(200);
    await deliver();
    const fresh = (
      (await A.get(`/api/v1/alerts?regression_id=${builder.id}&status=firing`)).body
        .alerts as AlertJson[]
    )[0]!;
    expect(fresh.id).not.toBe(old.id);
    expect([fresh.silenced_by, fresh.notified, fresh.paging.state]).toEqual([
      s.id,
      false,
      'silenced',
    ]);
    expect(loggedFor(old.id)).toEqual(['firing', 'resolved']);
    expect(loggedFor(fresh.id)).toEqual([]);
    const linker = alerts.find((a) => a.regression_id !== builder.id)!;
    expect(loggedFor(linker.id)).toEqual(['firing']);
  });
});
