/**
 * Backup by `pg_dump` of the coordinator, restored into a fresh Citus database (docs/citus.md
 * "Backups"): the dump holds the distributed tables' rows (Citus answers its COPY from the
 * shards), `pg_restore` makes them plain tables on the coordinator, and Onset's next start
 * distributes them again with every row.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { CITUS_PG_BIN, citusMissing, createCitusTestDatabase } from '@onset/testkit/citus';
import { exportUntilAcked, startTestServer, type TestServer } from '@onset/testkit';

const missing = citusMissing();

async function counts(url: string) {
  const c = new pg.Client(url);
  await c.connect();
  try {
    const { rows } = await c.query<{ o: number; h: number; s: number; d: number }>(
      `SELECT (SELECT count(*) FROM observations)::int AS o, (SELECT count(*) FROM histograms)::int AS h,
              (SELECT count(*) FROM series)::int AS s, (SELECT count(*) FROM pg_dist_partition)::int AS d`,
    );
    return rows[0]!;
  } finally {
    await c.end();
  }
}

describe.skipIf(missing)(
  `backup and restore on Citus${missing ? ` (skipped: missing ${missing})` : ''}`,
  () => {
    const servers: TestServer[] = [];
    afterAll(async () => {
      for (const s of servers) await s.close().catch(() => {});
    });

    it('restores a pg_dump of the coordinator into a new database that Onset distributes again', async () => {
      const source = await startTestServer();
      servers.push(source);
      const t = BigInt(Date.now() - 5000) * 1_000_000n;
      const spans = Array.from({ length: 100 }, (_, i) => ({
        traceId: (i + 1).toString(16).padStart(32, '0'),
        spanId: (i + 1).toString(16).padStart(16, '0'),
        name: 'GET /restore',
        kind: 2,
        startTimeUnixNano: String(t),
        endTimeUnixNano: String(t + BigInt(1_000_000 * (i + 1))),
      }));
      const body = JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'restore' } }] },
            scopeSpans: [{ spans }],
          },
        ],
      });
      await exportUntilAcked(source.otlpUrl, body, { giveUpAt: Date.now() + 30_000 });
      const before = await counts(source.databaseUrl);
      expect(before.o).toBe(100);
      expect(before.d).toBeGreaterThan(0);
      await source.close();

      const dump = path.join(os.tmpdir(), `onset-restore-${process.pid}.dump`);
      execFileSync(path.join(CITUS_PG_BIN, 'pg_dump'), ['-Fc', '-f', dump, source.databaseUrl]);
      const target = await createCitusTestDatabase('onset_restore');
      try {
        execFileSync(path.join(CITUS_PG_BIN, 'pg_restore'), ['-d', target, dump], {
          stdio: 'pipe',
        });
      } finally {
        rmSync(dump, { force: true });
      }
      // Restored as plain tables on the coordinator, every row there.
      const restored = await counts(target);
      expect(restored).toEqual({ ...before, d: 0 });

      const again = await startTestServer({ databaseUrl: target });
      servers.push(again);
      expect(await counts(target)).toEqual(before);
    }, 120_000);
  },
);
