import { defineConfig } from 'vitest/config';

/** The long, mostly waiting files (the 'live' project). */
const LIVE = [
  'apps/agent/test/live/host.test.ts',
  'e2e/polyglot.test.ts',
  'apps/agent/test/operations-live.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two test files at a time keeps the shared PostgreSQL responsive. `npm test`
    // (packages/testkit/src/run-suite.ts) runs the 'live' project in a second vitest process
    // beside the others, one file at a time: its files mostly wait on test time.
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
          exclude: ['apps/server/test/citus/**', ...LIVE, '**/node_modules/**'],
          globalSetup: ['packages/testkit/src/global-setup.ts'],
        },
      },
      {
        // Minutes of real time each, mostly waiting on test time or the wall clock's next minute
        // while using a fraction of a core: `npm test` gives them a worker of their own.
        extends: true,
        test: {
          name: 'live',
          include: LIVE,
          // run-suite.ts sets this to 1 for its live process (the CLI's --maxWorkers does not
          // reach a project that inherits the root's count); otherwise the root's 2.
          maxWorkers: Number(process.env.ONSET_LIVE_WORKERS) || undefined,
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
