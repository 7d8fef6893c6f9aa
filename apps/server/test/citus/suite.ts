/**
 * Runs an existing suite, its assertions unchanged, on the `citus` project's cluster
 * (vitest.config.ts: createTestDatabase() makes each database on a coordinator and two workers).
 * Where Citus or PostgreSQL 15 is missing the suite is skipped under a name saying what is missing.
 */
import { describe, it } from 'vitest';
import { citusMissing } from '@onset/testkit/citus';

export async function citusSuite(name: string, load: () => Promise<unknown>): Promise<void> {
  const missing = citusMissing();
  if (missing) {
    describe.skip(`${name} on Citus: skipped, missing ${missing}`, () => {
      it('needs a Citus cluster', () => {});
    });
    return;
  }
  await load();
}
