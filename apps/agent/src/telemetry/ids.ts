/** Random W3C trace and span ids, drawn from a pooled buffer (one syscall per 4 KiB, not per span). */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  let zero = true;
  for (let i = used; i < used + bytes && zero; i++) zero = pool[i] === 0;
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  // All-zero ids are invalid in W3C trace context.
  return zero ? randomHex(bytes) : hex;
}

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);
