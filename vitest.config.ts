import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'e2e/**/*.test.ts'],
    globalSetup: ['packages/testkit/src/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two test files at a time keeps the shared PostgreSQL responsive.
    maxWorkers: 2,
    // The default reporter, then one plain closing line of counts (summary-reporter.ts).
    reporters: ['default', './packages/testkit/src/summary-reporter.ts'],
  },
});
