import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two test files at a time keeps the shared PostgreSQL responsive.
    maxWorkers: 2,
    // The default reporter, then one plain closing line of counts (summary-reporter.ts).
    reporters: ['default', './packages/testkit/src/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'onset',
          include: [
            'packages/*/test/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            // The web's data modules keep their tests beside them.
            'apps/web/src/**/*.test.ts',
            'e2e/**/*.test.ts',
          ],
          exclude: ['apps/server/test/citus/**', '**/node_modules/**'],
          globalSetup: ['packages/testkit/src/global-setup.ts'],
        },
      },
      {
        // The same server on a real Citus cluster (docs/citus.md): a coordinator and two
        // workers for the project's run; skipped, naming what is missing, where Citus is not
        // installed.
        extends: true,
        test: {
          name: 'citus',
          include: ['apps/server/test/citus/**/*.test.ts'],
          globalSetup: ['packages/testkit/src/citus-setup.ts'],
          env: { ONSET_TEST_DATABASE: 'citus' },
        },
      },
    ],
  },
});
