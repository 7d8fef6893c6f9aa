/**
 * An Onset upgrade on a running cluster (docs/citus.md "Upgrades"): a database migrated by an
 * older Onset (the migrations through 0022, its tables distributed) takes the current
 * migrations at the next start (ALTERs of distributed and reference tables, a new table), and
 * the new table gets its place in the plan while the old ones are not converted again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { citusMissing, createCitusTestDatabase } from '@onset/testkit/citus';
import { startTestServer, type TestServer } from '@onset/testkit';
import { CITUS_PLAN } from '../../src/db/citus.ts';

const missing = citusMissing();
const MIGRATIONS = path.resolve(import.meta.dirname, '../../../../migrations');
const OLD_LAST = '0022_regression_floor.sql';

describe.skipIf(missing)(
  `upgrade on Citus${missing ? ` (skipped: missing ${missing})` : ''}`,
  () => {
    let server: TestServer | undefined;
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'onset-old-migrations-'));
    afterAll(async () => {
      await server?.close();
      rmSync(tmp, { recursive: true, force: true });
    });

    it('applies the newer migrations to an already-distributed database and places the new table', async () => {
      const files = readdirSync(MIGRATIONS).sort();
      for (const f of files.slice(0, files.indexOf(OLD_LAST) + 1))
        cpSync(path.join(MIGRATIONS, f), path.join(tmp, f));
      const url = await createCitusTestDatabase('onset_upgrade');
      await runner({
        databaseUrl: url,
        dir: tmp,
        direction: 'up',
        migrationsTable: 'onset_migrations',
        checkOrder: false,
        log: () => {},
        verbose: false,
      });
      const c = new pg.Client(url);
      await c.connect();
      try {
        // The older Onset's conversion: the plan's tables that existed then.
        for (const p of CITUS_PLAN) {
          if (p.kind === 'local') continue;
          const { rows } = await c.query(`SELECT to_regclass($1) AS r`, [p.table]);
          if (!rows[0].r) continue;
          if (p.kind === 'reference') await c.query(`SELECT create_reference_table($1)`, [p.table]);
          else
            await c.query(`SELECT create_distributed_table($1, $2, colocate_with => $3)`, [
              p.table,
              p.by,
              p.colocateWith ?? 'default',
            ]);
        }
        expect(
          (await c.query(`SELECT to_regclass('detect_shard_marks') AS r`)).rows[0].r,
        ).toBeNull();
        const dist = async () =>
          (
            await c.query<{ t: string }>(
              `SELECT logicalrelid::regclass::text AS t FROM pg_dist_partition ORDER BY 1`,
            )
          ).rows.map((r) => r.t);
        const before = await dist();

        server = await startTestServer({ databaseUrl: url });
        const { rows: applied } = await c.query(`SELECT count(*)::int AS n FROM onset_migrations`);
        expect(applied[0].n).toBe(files.filter((f) => f.endsWith('.sql')).length);
        // The new table is local on the coordinator, as planned; nothing distributed changed.
        expect(
          (await c.query(`SELECT to_regclass('detect_shard_marks') AS r`)).rows[0].r,
        ).not.toBeNull();
        const after = await dist();
        expect(after.filter((t) => !before.includes(t) && !/_p\d{8}$/.test(t))).toEqual([]);
        expect(after).not.toContain('detect_shard_marks');
        // 0024's ADD COLUMN on the distributed span_durations reached its shards.
        const { rows: cols } = await c.query(
          `SELECT result FROM run_command_on_shards('span_durations',
           $$SELECT count(*) FROM information_schema.columns WHERE table_name = '%s' AND column_name = 'sorted'$$)`,
        );
        expect(cols.length).toBeGreaterThan(0);
        expect(cols.every((r: { result: string }) => r.result === '1')).toBe(true);
      } finally {
        await c.end();
      }
    }, 120_000);
  },
);
