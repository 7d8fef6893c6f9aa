/** `npm run bench`: every benchmark in turn; each prints its table and writes bench/results/<name>.json. */
import { spawnSync } from 'node:child_process';
import { ROOT } from './lib/harness.ts';

const benches = ['ingest', 'quantiles', 'detect', 'slo', 'ui', 'agent', 'fuzz'];
const failed: string[] = [];
for (const name of benches) {
  console.log(`\n=== bench:${name} ===`);
  const r = spawnSync('npm', ['run', '--silent', `bench:${name}`], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) failed.push(name);
}
console.log(
  failed.length
    ? `\nbenchmarks that failed: ${failed.join(', ')}`
    : '\nall benchmarks ran; results in bench/results/',
);
process.exit(failed.length ? 1 : 0);
