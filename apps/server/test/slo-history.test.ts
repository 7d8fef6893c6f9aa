/**
 * GET /api/v1/slos/{id}/history on a real server: burn lines and budget from
 * every series the SLO's selector matches under PostgreSQL's regex (more than
 * ten of them), tiers and factors identical to the SLO status the alerts use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { MIN, api, sendSpans, traffic } from './slo-support.ts';

let srv: TestServer;
let A: ReturnType<typeof api>;
const NOW = Date.now();
const M0 = Math.floor(NOW / MIN) * MIN;
const SERIES = 12;

beforeAll(async () => {
  srv = await startTestServer();
  A = api(srv.url);
  const spans = [];
  // Twelve matching series, 10 calls a minute for 30 minutes; pg-11 is slow (500 ms) throughout.
  for (let k = 0; k < SERIES; k++)
    spans.push(
      ...traffic(M0 - 40 * MIN, M0 - 10 * MIN, 10, k === 11 ? 500_000 : 5_000, {
        executable: `pg-${k}`,
      }),
    );
  // A series the selector must not match; a JavaScript regex would ([[:digit:]]+ there is the class [:digt followed by "]").
  spans.push(...traffic(M0 - 40 * MIN, M0 - 10 * MIN, 10, 900_000, { executable: 'pg-t]' }));
  await sendSpans(srv.otlpUrl, spans);
  await new Promise((r) => setTimeout(r, 300)); // the SLO counting cursor trails the clock by 250 ms
}, 120_000);
afterAll(() => srv?.close());

const create = async (window: string) => {
  const r = await A.post('/api/v1/slos', {
    name: `spawns ${window}`,
    service: 'pageserver',
    op: 'spawn',
    name_match: '^pg-[[:digit:]]+$',
    threshold_ms: 100,
    objective: 0.99,
    window,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as {
    id: string;
    status: {
      tiers: Array<{ name: string; factor: number }>;
      burn_rates: Record<string, number | null>;
      budget_remaining: number;
    };
  };
};

describe('SLO history', () => {
  it('draws every matching series (PostgreSQL regex, no cap) with the tiers the alerts use', async () => {
    const slo = await create('28d');
    // An absolute start: the server's `now` comes seconds after NOW on a loaded machine, and the
    // checks below are about where the first bucket sits against the range's start.
    const from = new Date(NOW - 6 * 3_600_000).toISOString();
    const h = await A.get(`/api/v1/slos/${slo.id}/history?from=${from}&to=now`);
    expect(h.status, JSON.stringify(h.body)).toBe(200);
    const series = await A.get('/api/v1/series?service=pageserver');
    const byName = new Map<string, string>(
      series.body.series.map((s: { id: string; name: string }) => [s.name, s.id]),
    );
    expect(h.body.series_ids).toHaveLength(SERIES);
    expect(h.body.series_ids).not.toContain(byName.get('pg-t]'));

    // Tiers: the very objects the SLO status reports, factors scaled to 28 days.
    expect(h.body.tiers).toEqual(slo.status.tiers);
    expect(h.body.tiers.map((t: { factor: number }) => t.factor)).toEqual([13.44, 5.6, 2.8, 1]);
    expect(
      h.body.burn.lines.map((l: { tier: string; window: string; factor: number }) => [
        l.tier,
        l.window,
        l.factor,
      ]),
    ).toEqual([
      ['page_1h', '1h', 13.44],
      ['page_6h', '6h', 5.6],
      ['ticket_1d', '1d', 2.8],
      ['ticket_3d', '3d', 1],
    ]);

    // One slow series of twelve: 1/12 bad against a 1% allowance burns at 8.33×, in the chart as in the status.
    const line1h = h.body.burn.lines[0].values as Array<number | null>;
    expect(h.body.burn.t).toHaveLength(line1h.length);
    expect(line1h.at(-1)).toBeCloseTo(100 / 12, 6);
    expect(slo.status.burn_rates['1h']).toBeCloseTo(100 / 12, 6);
    // The 3-day line is complete from the start of the range (no traffic then: null, not 0).
    expect(h.body.burn.lines[3].values[0]).toBeNull();
    expect(h.body.burn.t[0]).toBeGreaterThan(NOW - 6 * 3_600_000);
    expect(h.body.burn.t[0] - h.body.burn.step_ms).toBeLessThanOrEqual(NOW - 6 * 3_600_000 + 1000);

    const budget = h.body.budget.values as Array<number | null>;
    expect(budget.at(-1)).toBeCloseTo(slo.status.budget_remaining, 6);
    expect(budget.at(-1)).toBeCloseTo(1 - 100 / 12, 6);
    expect(h.body.budget_remaining).toBeCloseTo(slo.status.budget_remaining, 9);
    expect(h.body.exhaustion_ms).toBeNull(); // already spent
  });

  it('scales the factors to a 7-day window, as the SLO pass does', async () => {
    const slo = await create('7d');
    const h = await A.get(`/api/v1/slos/${slo.id}/history?from=now-24h`);
    expect(h.status).toBe(200);
    expect(h.body.tiers).toEqual(slo.status.tiers);
    expect(h.body.burn.lines.map((l: { factor: number }) => l.factor)).toEqual([3.36, 1.4, 1, 1]);
  });

  it('answers 400 for a bad range and 404 for an unknown SLO', async () => {
    const slo = await create('28d');
    expect((await A.get(`/api/v1/slos/${slo.id}/history?from=now&to=now-1h`)).status).toBe(400);
    expect((await A.get(`/api/v1/slos/${slo.id}/history?from=yesterday`)).status).toBe(400);
    expect((await A.get(`/api/v1/slos/${slo.id}/history?from=now-900d`)).status).toBe(400);
    expect((await A.get(`/api/v1/slos/999999/history`)).status).toBe(404);
    expect((await A.get(`/api/v1/slos/abc/history`)).status).toBe(400);
  });
});

describe('SLO membership', () => {
  // Moved from the web's sloMatches test: the server's rule (MATCH_SQL, PostgreSQL regex) is the only one.
  it('says which SLOs watch each series: by selector and regex, or by bound series', async () => {
    const bySelector = await create('28d');
    const series = (await A.get('/api/v1/series?service=pageserver')).body.series as Array<{
      id: string;
      name: string;
    }>;
    const id = (name: string) => series.find((s) => s.name === name)!.id;
    const bound = await A.post('/api/v1/slos', {
      name: 'pg-3 only',
      series_id: id('pg-3'),
      threshold_ms: 100,
      objective: 0.99,
      window: '7d',
    });
    expect(bound.status, JSON.stringify(bound.body)).toBe(201);
    const r = await A.get(
      `/api/v1/slos/watching?series_id=${id('pg-3')},${id('pg-4')},${id('pg-t]')},${id('pg-3')}`,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const watching = new Map<string, string[]>(
      r.body.series.map((x: { series_id: string; slo_ids: string[] }) => [x.series_id, x.slo_ids]),
    );
    expect(watching.size).toBe(3);
    expect(watching.get(id('pg-3'))).toEqual(
      expect.arrayContaining([bySelector.id, bound.body.id]),
    );
    expect(watching.get(id('pg-4'))).toContain(bySelector.id);
    expect(watching.get(id('pg-4'))).not.toContain(bound.body.id);
    expect(watching.get(id('pg-t]'))).toEqual([]);
    expect((await A.get('/api/v1/slos/watching?series_id=abc')).status).toBe(400);
    expect((await A.get('/api/v1/slos/watching')).status).toBe(400);
  });
});
