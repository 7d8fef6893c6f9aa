/**
 * The tables on a Citus cluster (db/citus.ts, docs/citus.md): after a server has started on a
 * coordinator, every table has its planned place (a migration that adds a table without one
 * stops the start: citusPlanGaps), raw spans are distributed by trace, histograms, hourly
 * rollups and durations by series in one colocation group, the registries are reference tables,
 * and the job, lease and state tables stay on the coordinator. A second server starting on the
 * same database converts nothing again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { citusMissing } from '@onset/testkit/citus';
import { startTestServer, type TestServer } from '@onset/testkit';
import { CITUS_PLAN, citusPlanGaps, distributeTables } from '../../src/db/citus.ts';

const missing = citusMissing();

describe.skipIf(missing)(
  `tables on Citus${missing ? ` (skipped: missing ${missing})` : ''}`,
  () => {
    let server: TestServer;
    let c: pg.Client;
    beforeAll(async () => {
      server = await startTestServer();
      c = new pg.Client(server.databaseUrl);
      await c.connect();
    });
    afterAll(async () => {
      await c?.end();
      await server?.close();
    });

    it('places every table as planned', async () => {
      expect(await citusPlanGaps(c)).toEqual([]);
      const { rows } = await c.query<{ t: string; method: string; col: string | null; g: number }>(
        `SELECT logicalrelid::regclass::text AS t, partmethod AS method,
              column_to_column_name(logicalrelid, partkey) AS col, colocationid AS g
         FROM pg_dist_partition`,
      );
      const got = new Map(rows.map((r) => [r.t, r]));
      for (const p of CITUS_PLAN) {
        const r = got.get(p.table);
        if (p.kind === 'local') expect(r, p.table).toBeUndefined();
        else if (p.kind === 'reference') expect(r?.method, p.table).toBe('n');
        else expect([r?.method, r?.col], p.table).toEqual(['h', p.by]);
      }
      const group = (t: string) => got.get(t)!.g;
      expect(group('histograms_hourly')).toBe(group('histograms'));
      expect(group('span_durations')).toBe(group('histograms'));
      // Day partitions made since are distributed with their parent.
      const { rows: parts } = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_inherits i JOIN pg_dist_partition d ON d.logicalrelid = i.inhrelid
        WHERE i.inhparent = 'observations'::regclass`,
      );
      expect(parts[0]!.n).toBeGreaterThan(0);
      // graphile-worker's jobs stay on the coordinator.
      const { rows: jobs } = await c.query(
        `SELECT 1 FROM pg_dist_partition d JOIN pg_class k ON k.oid = d.logicalrelid
         JOIN pg_namespace n ON n.oid = k.relnamespace WHERE n.nspname = 'graphile_worker'`,
      );
      expect(jobs).toEqual([]);
    });

    it("keeps 8 connections per worker cached in the pool's sessions (ONSET_CITUS_CACHED_CONNS)", async () => {
      const { rows } = await server.onset.pool.query<{ v: string }>(
        `SELECT current_setting('citus.max_cached_conns_per_worker') AS v`,
      );
      expect(rows[0]!.v).toBe('8');
      // A session outside the pool has Citus's default.
      const { rows: own } = await c.query<{ v: string }>(
        `SELECT current_setting('citus.max_cached_conns_per_worker') AS v`,
      );
      expect(own[0]!.v).toBe('1');
    });

    it('converts nothing on the next start', async () => {
      expect(await distributeTables(server.databaseUrl)).toEqual([]);
    });
  },
);
