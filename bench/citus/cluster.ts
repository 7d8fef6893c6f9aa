/**
 * Start a Citus cluster on loopback (a coordinator and BENCH_WORKERS workers, default 2) and keep
 * it up until interrupted, printing the node URLs and a fresh database's URL: for trying Onset
 * on Citus by hand (docs/citus.md).  node --import tsx bench/citus/cluster.ts
 */
import { startCitusCluster } from '@onset/testkit/citus';

const cluster = await startCitusCluster({ workers: Number(process.env.BENCH_WORKERS ?? 2) });
const db = await cluster.createDatabase('onset');
console.log(
  JSON.stringify({
    coordinator: cluster.coordinator.url(),
    workers: cluster.workers.map((w) => w.url()),
    database: db,
  }),
);
const stop = () => void cluster.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
setInterval(() => {}, 1 << 30);
