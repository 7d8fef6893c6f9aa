import { runner } from 'node-pg-migrate';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../migrations',
);

/** Apply every pending migration (node-pg-migrate holds an advisory lock, so N servers can start at once). */
export async function migrate(
  databaseUrl: string,
  log: (msg: string) => void = () => {},
): Promise<string[]> {
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
