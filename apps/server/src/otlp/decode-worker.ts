/** Worker-thread entry of the decode pool (decode-pool.ts): one trace export per task. */
import type { Encoding } from './body.ts';
import { decodeTraces, type DecodedTraces, type RefusedTraces } from './decode-traces.ts';
import type { SpanLimits } from './normalize-traces.ts';

export interface DecodeTask {
  body: Uint8Array;
  encoding: Encoding;
  limits: SpanLimits;
}

export default function decode(task: DecodeTask): DecodedTraces | RefusedTraces {
  return decodeTraces(task.body, task.encoding, task.limits);
}
