import { runner } from 'node-pg-migrate';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../migrations');

/** Apply every pending migration (node-pg-migrate holds an advisory lock, so N servers can start at once). */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'onset_migrations',
    checkOrder: true,
    log,
    verbose: false,
  });
  return applied.map((m) => m.name);
}
