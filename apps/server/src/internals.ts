/**
 * The in-process pieces that benchmarks time directly (bench/): the pool,
 * migrations, partitions, and the passes the scheduler runs. Not an API for
 * anything else; reached as `@onset/server/internals`, never by relative path.
 */
export { createPool, type Pool } from './db/pool.ts';
export { migrate } from './db/migrate.ts';
export { Partitions, utcDay } from './db/partitions.ts';
export { compactHistograms } from './otlp/compact.ts';
export { MINUTE_LATENESS_MS, sealDelayMs } from './detection/detect-options.ts';
export { readPoints } from './detection/points.ts';
export { stepHeld } from './regressions/alerting.ts';
export { runDetectionPass, type PassResult as DetectionPassResult } from './detection/engine.ts';
export { evaluateSlos, runSloPass } from './slos/evaluate.ts';
export { COUNT_SQL, countNewObservations, listSlos } from './slos/store.ts';
export { runDeliveryPass } from './webhooks/deliver.ts';
export { MetricsRequest, TraceRequest } from './otlp/protobuf.ts';
