/**
 * Servers starting at once on a fresh database (docs/deploy.md "Scaling
 * out"): their migration runs take turns instead of one failing with
 * node-pg-migrate's "Another migration is already running".
 */
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';

describe('migrations of servers starting together', () => {
  it('all succeed, and the schema is applied once', async () => {
    const url = await createTestDatabase();
    const runs = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const applied = runs.map((r) => r.length).sort((a, b) => b - a);
    expect(applied[0]).toBeGreaterThan(10);
    // Whoever ran first applied everything; the others found nothing left (or ran first in turn on nothing).
    expect(applied.slice(1)).toEqual([0, 0]);
  }, 120_000);
});
