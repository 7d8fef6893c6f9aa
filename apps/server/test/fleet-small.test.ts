/**
 * The fleet replay of `npm run eval:fleet`, small: 16 services on 40 hosts in
 * ONE database, one incident of each of the five kinds of product.md (drawn
 * by the seeded generator in bench/eval-fleet/fleet.ts, independent of the
 * incident tests' fixtures), canary and kernel rollouts, unrelated deploys
 * near the onsets, diurnal swings, bursts and services where nothing changes,
 * replayed as OTLP JSON with backdated timestamps through the real server,
 * a detection pass (POST /api/v1/detect with `upto`) every 5 data minutes.
 *
 * The issue 14 bars: every incident is found exactly once, its top suspect
 * is the rollout that caused it, its cohort split is right, and no
 * regression opens on a service where nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Fleet, SMALL_FLEET } from '../../../bench/eval-fleet/fleet.ts';
import { replay, type ReplayResult } from '../../../bench/eval-fleet/replay.ts';
import { formatScore, scoreFleet, type FleetScore } from '../../../bench/eval-fleet/score.ts';

const SEED = 1;
let server: TestServer;
let fleet: Fleet;
let result: ReplayResult;
let score: FleetScore;

beforeAll(async () => {
  server = await startTestServer();
  fleet = new Fleet({ seed: SEED, ...SMALL_FLEET, endMs: Date.now() - 2 * 60_000 });
  result = await replay(fleet, { apiUrl: server.url, otlpUrl: server.otlpUrl }, { stepMin: 5 });
  score = scoreFleet(fleet, result);
  // The whole picture in the log, so a failure says more than one number.
  console.log(formatScore(SEED, score));
}, 240_000);

afterAll(async () => {
  await server?.close();
});

describe('a small fleet in one database', () => {
  it('is the fleet it says: five incident kinds, rollouts, no-change services, every span accepted', () => {
    expect(new Set(fleet.incidents.map((i) => i.kind)).size).toBe(5);
    expect(fleet.incidents.some((i) => i.regressedHosts.length < i.seriesHosts.length)).toBe(true);
    expect(fleet.services.filter((s) => s.cls === 'steady').length).toBeGreaterThanOrEqual(5);
    expect(result.export.spans).toBeGreaterThan(50_000);
    expect(result.export.rejected).toBe(0);
  });

  it('finds every incident exactly once', () => {
    const wrong = score.outcomes
      .filter((o) => o.found !== 1)
      .map((o) => `${o.id}: found ${o.found} times ${o.regressions.join(' | ')}`);
    expect(wrong).toEqual([]);
  });

  it('names the rollout that caused each incident as its top suspect', () => {
    const wrong = score.outcomes
      .filter((o) => o.found > 0 && !o.top_suspect_right)
      .map((o) => `${o.id}: top suspect ${o.top_suspect ?? 'none'}`);
    expect(wrong).toEqual([]);
  });

  it('splits each cohort right: the regressed hosts alone on the slow side of a confined incident, none on the fast side of any, none on both', () => {
    const wrong = score.outcomes
      .filter((o) => o.found > 0 && o.cohort_right === false)
      .map((o) => `${o.id}: ${o.cohort ?? 'no cohort'}`);
    expect(wrong).toEqual([]);
  });

  it('opens no regression on a service where nothing changed', () => {
    const spurious = score.spurious_items
      .filter((s) => s.class === 'steady')
      .map((s) => `${s.service} ${s.series} ${s.onset}`);
    expect(spurious).toEqual([]);
  });
});
