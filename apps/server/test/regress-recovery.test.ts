/**
 * The detection pass under stress: a pass that dies half-way loses nothing
 * and duplicates nothing; a first pass over old history (a backfill of a
 * step 30 hours ago, only visible in hourly rollups by then) still finds and
 * places it; and only admins may run a pass or change a regression.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Registry } from '../src/otlp/registry.ts';
import { Partitions } from '../src/db/partitions.ts';
import { runDetect } from '../src/detection/pass.ts';
import { runDetectionPass } from '../src/detection/engine.ts';
import {
  incidentTimes,
  replayIncidents,
  type MarkerIds,
  REPLAY_MEMBERS,
  REPLAY_REGRESSIONS,
} from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';

const MIN = 60_000;
const HOUR = 60 * MIN;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function list(query = ''): Promise<Regression[]> {
  const res = await fetch(`${server.url}/api/v1/regressions${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { regressions: Regression[] }).regressions;
}

describe('a pass that crashes half-way', () => {
  it('commits what it finished, and the next pass completes the rest without duplicating anything', async () => {
    const times = incidentTimes();
    const { markers } = await replayIncidents({
      otlpUrl: server.otlpUrl,
      apiUrl: server.url,
      times,
      phase: 1,
    });
    const pool = server.onset.pool;
    // The third batch of detector states fails to commit (a sequence is not rolled back, so it fails once).
    await pool.query(`CREATE SEQUENCE inject_failure`);
    await pool.query(`CREATE FUNCTION inject_failure() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF nextval('inject_failure') = 3 THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NULL; END $$`);
    await pool.query(
      `CREATE TRIGGER inject_failure BEFORE INSERT ON regress_state FOR EACH STATEMENT EXECUTE FUNCTION inject_failure()`,
    );
    const deps = { pool, registry: new Registry(pool), partitions: new Partitions(pool) };
    await expect(
      runDetect(deps, { uptoMs: times.endMs, batchSize: 4, pairUptoMs: Date.now() }),
    ).rejects.toThrow(/injected failure/);
    const partial = await list();
    const { rows: states } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM regress_state`,
    );
    expect(states[0]!.n).toBe(8); // two batches of four series committed
    expect(partial.length).toBeLessThan(REPLAY_REGRESSIONS.length);

    const again = await runDetectionPass(pool, { uptoMs: times.endMs, batchSize: 4 });
    expect(again.regressions.opened).toBe(REPLAY_REGRESSIONS.length - partial.length);
    const all = await list();
    expect(all.map((r) => `${r.service}/${r.view}`).sort()).toEqual([...REPLAY_REGRESSIONS]);
    // Batches of four series: the edge's views may be found in different batches, still one regression.
    expect(all.flatMap((r) => r.members.map((x) => `${x.service}/${x.view}`)).sort()).toEqual([
      ...REPLAY_MEMBERS,
    ]);
    const top = (service: string, view = 'internal') =>
      all.find((r) => r.service === service && r.view === view)!.suspects[0]!.deploy_id;
    const m = markers as MarkerIds;
    expect([
      top('pageserver'),
      top('builder'),
      top('postgres'),
      top('checkout', 'gap'),
      top('containerd'),
    ]).toEqual([
      m.pageserverRelease,
      m.builderSpawnConfig,
      m.postgresRelease,
      m.urliteHyper,
      m.kernelRollout,
    ]);
    // And one more pass over the same minutes changes nothing.
    expect(
      (await runDetectionPass(pool, { uptoMs: times.endMs, batchSize: 4 })).regressions.opened,
    ).toBe(0);
    await pool.query(`DROP TRIGGER inject_failure ON regress_state`);
  });
});

describe('a first pass over old history', () => {
  it('finds a step from 30 hours ago that only the hourly rollups still show in full, on the right minute, with its deploy', async () => {
    const step = Math.floor((Date.now() - 30 * HOUR) / MIN) * MIN;
    const rand = (() => {
      let a = 99;
      return () => (a = (a * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    })();
    const spans: Array<{ id: number; host: string; startMs: number; ms: number }> = [];
    for (let m = step - 24 * HOUR; m < step + 8 * HOUR; m += MIN) {
      for (const host of ['ar-1', 'ar-2']) {
        for (let i = 0; i < 2; i++) {
          const base = m >= step ? 400 : 50;
          spans.push({
            id: spans.length + 1,
            host,
            startMs: m + i * 30_000 + rand() * 20_000,
            ms: base * Math.exp(0.25 * (rand() + rand() + rand() - 1.5)),
          });
        }
      }
    }
    const ns = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();
    for (let i = 0; i < spans.length; i += 2000) {
      const chunk = spans.slice(i, i + 2000);
      const byHost = ['ar-1', 'ar-2'].map((host) => ({
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'archive' } },
            { key: 'host.name', value: { stringValue: host } },
          ],
        },
        scopeSpans: [
          {
            spans: chunk
              .filter((s) => s.host === host)
              .map((s) => ({
                traceId: s.id.toString(16).padStart(32, '0'),
                spanId: s.id.toString(16).padStart(16, '0'),
                name: 'fsync',
                kind: 1,
                startTimeUnixNano: ns(s.startMs),
                endTimeUnixNano: ns(s.startMs + s.ms),
                attributes: [{ key: 'file.directory', value: { stringValue: '/srv/archive' } }],
              })),
          },
        ],
      }));
      const res = await fetch(`${server.otlpUrl}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resourceSpans: byHost }),
      });
      expect(res.status).toBe(200);
    }
    const deploy = await fetch(`${server.url}/api/v1/deploys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        service: 'archive',
        kind: 'code',
        to_version: '4.0.0',
        description: 'sync every segment',
        at: new Date(step - 2 * MIN).toISOString(),
      }),
    });
    const marker = ((await deploy.json()) as { id: string }).id;
    // Housekeeping compacts the minutes and builds the hourly rollups, as the scheduler would have by now.
    await server.onset.maintain();
    const res = await fetch(`${server.url}/api/v1/detect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    const pass = ((await res.json()) as { detection: { screened: number } }).detection;
    expect(pass.screened).toBeGreaterThanOrEqual(1);
    const [r, ...rest] = await list('?service=archive');
    expect(rest).toEqual([]);
    expect(Math.abs(Date.parse(r!.onset) - step)).toBeLessThanOrEqual(5 * MIN);
    expect(r!.suspects[0]!.deploy_id).toBe(marker);
  });
});

describe('scopes', () => {
  let secured: TestServer;
  beforeAll(async () => {
    secured = await startTestServer({ env: { ONSET_TOKENS: 'read:tok-read,admin:tok-admin' } });
  });
  afterAll(async () => {
    await secured?.close();
  });

  it('reading needs read, running a pass or changing a regression needs admin', async () => {
    const call = (method: string, path: string, token?: string) =>
      fetch(`${secured.url}${path}`, {
        method,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    expect((await call('GET', '/api/v1/regressions')).status).toBe(401);
    expect((await call('GET', '/api/v1/regressions', 'tok-read')).status).toBe(200);
    expect((await call('POST', '/api/v1/detect', 'tok-read')).status).toBe(403);
    expect((await call('POST', '/api/v1/regressions/1/ack', 'tok-read')).status).toBe(403);
    const ok = await call('POST', '/api/v1/detect', 'tok-admin');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { detection: { through: string } }).detection.through).toMatch(
      /^\d{4}-/,
    );
    const last = await call('GET', '/api/v1/detect', 'tok-read');
    expect(((await last.json()) as { passes: number }).passes).toBe(1);
  });
});
