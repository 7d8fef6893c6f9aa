// Preloaded into the benchmarked server (`--import`): sums the time V8 spent in
// garbage collection on each thread and writes "<flushes> <ms>" to
// $BENCH_GC_FILE.<threadId> when the bench asks (SIGUSR2 to the server, passed on
// to its worker threads) and at exit. Asked, not on a timer: a write twice a
// second was ~1 % of the server's measured CPU. Written to a temporary file and
// renamed, so a reader never sees half a write; the count tells the reader its
// ask was answered.
import { PerformanceObserver } from 'node:perf_hooks';
import { renameSync, writeFileSync } from 'node:fs';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';

const file = process.env.BENCH_GC_FILE;
if (file) {
  let gcMs = 0;
  let flushes = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  }).observe({ entryTypes: ['gc'] });
  const flush = () => {
    const to = `${file}.${threadId}`;
    writeFileSync(`${to}.tmp`, `${++flushes} ${gcMs}`);
    renameSync(`${to}.tmp`, to);
  };
  const channel = new BroadcastChannel('bench-gc-probe');
  channel.unref();
  if (isMainThread)
    process.on('SIGUSR2', () => {
      flush();
      channel.postMessage('flush');
    });
  else channel.onmessage = flush;
  process.on('exit', flush);
}
