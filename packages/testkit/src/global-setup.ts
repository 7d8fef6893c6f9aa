import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@onset/server/embedded-postgres';

let db: EmbeddedDatabase | undefined;
let dir: string | undefined;

/** One real PostgreSQL for the whole test run; each suite makes its own database in it. */
export async function setup(): Promise<void> {
  if (process.env.ONSET_TEST_PG_URL) return; // an external server was provided
  dir = await mkdtemp(path.join(os.tmpdir(), 'onset-test-pg-'));
  await import('node:fs/promises').then((fs) => fs.chmod(dir!, 0o755));
  db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), ephemeral: true });
  process.env.ONSET_TEST_PG_URL = db.url('postgres');
}

export async function teardown(): Promise<void> {
  await db?.stop().catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {});
}
