/**
 * globalSetup of the `citus` test project (vitest.config.ts): one real Citus cluster (a
 * coordinator and two workers, citus-cluster.ts) for the project's run; each suite's
 * createTestDatabase() then makes its database on every node. Where PostgreSQL 15 or Citus is
 * missing nothing starts and the project's suites skip, naming what is missing.
 */
import { citusMissing, startCitusCluster, type CitusCluster } from './citus-cluster.ts';

let cluster: CitusCluster | undefined;

export async function setup(): Promise<void> {
  if (process.env.ONSET_TEST_CITUS_NODES) return;
  const missing = citusMissing();
  if (missing) {
    process.stderr.write(`citus: the Citus suites are skipped, missing ${missing}\n`);
    return;
  }
  cluster = await startCitusCluster({ workers: 2 });
  process.env.ONSET_TEST_CITUS_NODES = JSON.stringify({
    coordinator: cluster.coordinator.url(),
    workers: cluster.workers.map((w) => w.url()),
  });
}

export async function teardown(): Promise<void> {
  await cluster?.stop().catch(() => {});
}
