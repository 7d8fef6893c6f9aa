import type { Partitions } from '../db/partitions.ts';
import type { Pool } from '../db/pool.ts';
import { DecodePool } from './decode-pool.ts';
import { GroupCommit } from './group-commit.ts';
import { ExemplarRates } from './exemplar-rates.ts';

/** The trace ingest machinery one server shares across its listeners. */
export interface IngestPipeline {
  decoder: DecodePool;
  writer: GroupCommit;
  /** Cluster-wide exemplar keep rates (exemplar-rates.ts); started by startIngestPipeline. */
  rates: ExemplarRates;
}

/** The pipeline, its decode threads started (see DecodePool.warm). */
export async function startIngestPipeline(
  pool: Pool,
  partitions: Partitions,
  workers: number,
  exemplarRateIntervalMs = 0,
  writers?: number,
): Promise<IngestPipeline> {
  const p = createIngestPipeline(pool, partitions, workers, writers);
  await p.decoder.warm();
  p.rates.start(exemplarRateIntervalMs);
  return p;
}

export function createIngestPipeline(
  pool: Pool,
  partitions: Partitions,
  workers: number,
  writers?: number,
): IngestPipeline {
  return {
    decoder: new DecodePool(workers),
    writer: new GroupCommit(pool, partitions, { writers }),
    rates: new ExemplarRates(pool),
  };
}
