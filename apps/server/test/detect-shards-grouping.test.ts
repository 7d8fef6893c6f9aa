/**
 * One regression per incident when the incident's series sit in different
 * detection shards fed by different passes at the same time (two engines on
 * two pools, as two servers would): the checkout edge's client and gap views
 * are put in shards of different passes, and the two passes together still
 * open each replayed incident once, with the edge's two views as members of
 * one regression (detection/lock.ts: grouping commits one at a time across
 * the cluster; without that lock this test opens a second checkout
 * regression). Then every shard is fed again by other engines: nothing new.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import {
  incidentTimes,
  replayIncidents,
  REPLAY_MEMBERS,
  REPLAY_REGRESSIONS,
} from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';
import { createPool, type Pool } from '../src/db/pool.ts';
import { Partitions } from '../src/db/partitions.ts';
import { Registry } from '../src/otlp/registry.ts';
import { runDetect } from '../src/detection/pass.ts';
import { runDetectionPass } from '../src/detection/engine.ts';

let server: TestServer;
const pools: Pool[] = [];
const times = incidentTimes();

beforeAll(async () => {
  server = await startTestServer();
  await replayIncidents({ otlpUrl: server.otlpUrl, apiUrl: server.url, times, phase: 1 });
}, 120_000);

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.close();
});

async function regressions(): Promise<Regression[]> {
  const res = await fetch(`${server.url}/api/v1/regressions`);
  return ((await res.json()) as { regressions: Regression[] }).regressions;
}

describe('an incident across shards of two passes at once', () => {
  it('is one regression with the members both passes found', async () => {
    const pool = server.onset.pool;
    // Pairing and inference only (no shard): the edge series exist before the passes.
    const deps = { pool, registry: new Registry(pool), partitions: new Partitions(pool) };
    const paired = await runDetect(deps, { shards: [], pairUptoMs: Date.now() });
    expect(paired.pairing.pairs).toBeGreaterThan(0);
    expect(paired.detection.skipped).toBe(true);

    const { rows } = await pool.query<{ view: string; id: number }>(
      `SELECT view, id::int FROM series WHERE service = 'checkout' AND view IN ('client', 'gap') AND peer <> ''`,
    );
    const client = rows.find((r) => r.view === 'client')!.id;
    const gap = rows.find((r) => r.view === 'gap')!.id;
    // A shard count that puts the two views in different shards (a fresh cluster takes the first one it is given).
    const count = [16, 15, 14, 13].find((k) => client % k !== gap % k)!;
    await pool.query(`DELETE FROM detect_leases`);
    await pool.query(`INSERT INTO detect_leases (shard) SELECT generate_series(0, $1 - 1)`, [
      count,
    ]);
    const [c, g] = [client % count, gap % count];
    const withClient = [...Array(count).keys()].filter((s) => (s % 2 === 0 || s === c) && s !== g);
    const rest = [...Array(count).keys()].filter((s) => !withClient.includes(s));
    expect(withClient).toContain(c);
    expect(rest).toContain(g);

    // The first regression opened on checkout takes 4 s to commit, so the other pass finds its
    // step on the edge's other view while that regression is not committed yet: only the
    // cluster-wide commit lock makes it wait and join instead of opening a second one.
    await pool.query(`CREATE FUNCTION slow_checkout() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.service = 'checkout' THEN PERFORM pg_sleep(4); END IF; RETURN NEW; END $$`);
    await pool.query(
      `CREATE TRIGGER slow_checkout BEFORE INSERT ON regressions FOR EACH ROW EXECUTE FUNCTION slow_checkout()`,
    );
    const engine = () => {
      const p = createPool(server.databaseUrl, 4);
      pools.push(p);
      return p;
    };
    const [x, y] = await Promise.all([
      runDetectionPass(engine(), { uptoMs: times.endMs, shards: withClient, batchSize: 4 }),
      runDetectionPass(engine(), { uptoMs: times.endMs, shards: rest, batchSize: 4 }),
    ]);
    await pool.query(`DROP TRIGGER slow_checkout ON regressions`);
    expect(x.shards).toEqual({ count, run: withClient.length });
    expect(y.shards).toEqual({ count, run: rest.length });
    const { rows: all } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM series`);
    expect(x.series.total + y.series.total).toBe(all[0]!.n);

    const found = await regressions();
    expect(found.map((r) => `${r.service}/${r.view}`).sort()).toEqual([...REPLAY_REGRESSIONS]);
    expect(found.flatMap((r) => r.members.map((m) => `${m.service}/${m.view}`)).sort()).toEqual([
      ...REPLAY_MEMBERS,
    ]);
    const edge = found.find((r) => r.service === 'checkout')!;
    expect(edge.members.map((m) => Number(m.series_id)).sort((a, b) => a - b)).toEqual(
      [client, gap].sort((a, b) => a - b),
    );

    // Every shard again, by engines that start from the checkpoints: nothing opened twice.
    const again = await Promise.all([
      runDetectionPass(engine(), { uptoMs: times.endMs, shards: rest }),
      runDetectionPass(engine(), { uptoMs: times.endMs, shards: withClient }),
    ]);
    expect(again.map((r) => r.regressions.opened)).toEqual([0, 0]);
    expect((await regressions()).map((r) => r.id).sort()).toEqual(found.map((r) => r.id).sort());
  }, 120_000);
});
