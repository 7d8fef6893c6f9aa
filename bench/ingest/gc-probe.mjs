// Preloaded into the benchmarked server (`--import`): sums the time V8 spent in
// garbage collection on this thread and writes it (ms) to $BENCH_GC_FILE.<threadId>
// twice a second, so the bench reads it even though the server is stopped by a signal.
import { PerformanceObserver } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

const file = process.env.BENCH_GC_FILE;
if (file) {
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  }).observe({ entryTypes: ['gc'] });
  const flush = () => writeFileSync(`${file}.${threadId}`, String(gcMs));
  setInterval(flush, 500).unref();
  process.on('exit', flush);
}
