/**
 * bench/fuzz: 100,000 mutated OTLP bodies (traces and metrics, JSON and
 * protobuf; packages/testkit/src/otlp-fuzz.ts, fixed seed) sent with 8 in
 * flight to a server process on embedded PostgreSQL. Prints the answers by
 * status and by mutation, the 5xx count, the server's RSS (start, peak, end)
 * and bodies per second; writes bench/results/otlp-fuzz.json. The bar is
 * zero 5xx and zero values only PostgreSQL refused.
 */
import { benchDatabase, rssMb, startServerProcess, writeResult } from '../lib/harness.ts';
import { runOtlpFuzz } from '@onset/testkit/otlp-fuzz';

const BODIES = Number(process.env.BENCH_FUZZ_BODIES ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SEED = Number(process.env.BENCH_SEED ?? 1919);

const { db, url } = await benchDatabase();
const server = await startServerProcess(url, { ONSET_AGENT: 'off' });
const pid = server.proc.pid!;
console.log(
  `bench/fuzz: server pid ${pid}, ${BODIES} bodies, seed ${SEED}, ${CONCURRENCY} in flight`,
);

const rssStart = await rssMb(pid);
let rssPeak = rssStart;
const sampler = setInterval(() => {
  rssMb(pid).then(
    (mb) => (rssPeak = Math.max(rssPeak, mb)),
    () => {},
  );
}, 250);
const tally = await runOtlpFuzz({
  otlpUrl: server.otlpUrl,
  seed: SEED,
  count: BODIES,
  concurrency: CONCURRENCY,
  onProgress: (n) => {
    if (n % 10_000 === 0) console.log(`  ${n} bodies`);
  },
});
clearInterval(sampler);
const rssEnd = await rssMb(pid);
const healthy = (await fetch(`${server.url}/readyz`).catch(() => null))?.status === 200;
await server.stop();
await db.stop();

const result = {
  bodies: tally.bodies,
  seed: SEED,
  concurrency: CONCURRENCY,
  seconds: Number(tally.seconds.toFixed(1)),
  bodies_per_second: Math.round(tally.bodies / tally.seconds),
  by_status: tally.byStatus,
  server_errors_5xx: tally.serverErrors,
  refused_by_database: tally.refusedByDatabase,
  partial_successes: tally.partialSuccess,
  healthy_after: healthy,
  server_rss_mb: {
    start: Math.round(rssStart),
    peak: Math.round(rssPeak),
    end: Math.round(rssEnd),
  },
  by_mutation: tally.byMutation,
  samples_5xx: tally.samples,
  bar_server_errors_5xx: 0,
};
console.table({
  bodies: result.bodies,
  'bodies/s': result.bodies_per_second,
  ...Object.fromEntries(Object.entries(tally.byStatus).map(([s, n]) => [`status ${s}`, n])),
  '5xx': result.server_errors_5xx,
  'refused by PostgreSQL': result.refused_by_database,
  'partial successes': result.partial_successes,
  'healthy after': healthy,
  'RSS start MB': result.server_rss_mb.start,
  'RSS peak MB': result.server_rss_mb.peak,
  'RSS end MB': result.server_rss_mb.end,
});
console.log(`wrote ${await writeResult('otlp-fuzz', result)}`);
process.exit(tally.serverErrors === 0 && healthy ? 0 : 1);
