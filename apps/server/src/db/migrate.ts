import { runner } from 'node-pg-migrate';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../migrations',
);

/** How long a server starting beside others waits for their migration run before failing. */
const LOCKED_WAIT_MS = 120_000;

/**
 * Apply every pending migration. node-pg-migrate holds an advisory lock while
 * it runs and refuses to start beside another run, so N servers starting at
 * once take turns: a refused one retries until the other has finished (and
 * then finds nothing left to apply).
 */
export async function migrate(
  databaseUrl: string,
  log: (msg: string) => void = () => {},
): Promise<string[]> {
  const until = Date.now() + LOCKED_WAIT_MS;
  for (;;) {
    try {
      return await migrateOnce(databaseUrl, log);
    } catch (err) {
      if (!/Another migration is already running/.test(String((err as Error)?.message))) throw err;
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
    }
  }
}

async function migrateOnce(databaseUrl: string, log: (msg: string) => void): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'onset_migrations',
    // Features land in parallel; a dev database that ran a later file first must still take an earlier one.
    checkOrder: false,
    log,
    verbose: false,
  });
  return applied.map((m) => m.name);
}
