/**
 * Trace exports decoded off the main thread: protobuf/JSON decoding,
 * normalisation and row encoding (decode-traces.ts) run in a small pool of
 * worker threads (piscina), so the main thread only does HTTP, the registry
 * and the database conversation, and each thread's garbage stays in its own
 * heap. With 0 threads the same work runs inline.
 */
import { Piscina } from 'piscina';
import type { Encoding } from './body.ts';
import { decodeTraces, type DecodedTraces, type RefusedTraces } from './decode-traces.ts';
import type { DecodeTask } from './decode-worker.ts';
import type { SpanLimits } from './normalize-traces.ts';

export class DecodePool {
  private readonly pool: Piscina<DecodeTask, DecodedTraces | RefusedTraces> | null;

  constructor(readonly threads: number) {
    this.pool =
      threads > 0
        ? new Piscina({
            filename: new URL('./decode-worker.mjs', import.meta.url).href,
            minThreads: threads,
            maxThreads: threads,
            idleTimeout: Infinity,
            // Exports beyond this wait in the HTTP layer's in-flight limit instead.
            maxQueue: 1024,
            // Idle threads wait in their event loop, not in Atomics.wait, so they receive the
            // exemplar keep rates broadcast by the main thread (exemplar-rates.ts).
            atomics: 'disabled',
          })
        : null;
  }

  decode(
    body: Uint8Array,
    encoding: Encoding,
    limits: SpanLimits,
  ): Promise<DecodedTraces | RefusedTraces> {
    if (!this.pool) return Promise.resolve(decodeTraces(body, encoding, limits));
    return this.pool.run({ body, encoding, limits });
  }

  /**
   * Resolves once every thread has loaded its code (seconds under tsx on a busy machine), so
   * the first exports do not wait for it: the server awaits this before it listens.
   */
  async warm(): Promise<void> {
    if (!this.pool) return;
    const empty = new Uint8Array(0);
    const limits = { oldestMs: 0, newestMs: 0, maxDurationMs: 0, maxAttributes: 0 };
    await Promise.all(
      Array.from({ length: this.threads }, () => this.decode(empty, 'protobuf', limits)),
    );
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
  }
}
