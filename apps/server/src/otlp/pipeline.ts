import type { Partitions } from '../db/partitions.ts';
import type { Pool } from '../db/pool.ts';
import { DecodePool } from './decode-pool.ts';
import { GroupCommit } from './group-commit.ts';
import { ExemplarRates } from './exemplar-rates.ts';
import { FoldJournal } from './fold-journal.ts';

/** The trace ingest machinery one server shares across its listeners. */
export interface IngestPipeline {
  decoder: DecodePool;
  writer: GroupCommit;
  /** Cluster-wide exemplar keep rates (exemplar-rates.ts); started by startIngestPipeline. */
  rates: ExemplarRates;
  /** Histograms and durations folded across transactions under load (unless ONSET_HISTOGRAM_FOLD is 0); none on Citus. */
  journal?: FoldJournal;
}

/** The pipeline, its decode threads started (see DecodePool.warm). */
export async function startIngestPipeline(
  pool: Pool,
  partitions: Partitions,
  workers: number,
  exemplarRateIntervalMs = 0,
  writers?: number,
  fold?: { ms: number; onError?: (err: unknown, what: string) => void },
): Promise<IngestPipeline> {
  // With the fold off (ms 0) the journal still applies what servers that fold left.
  const journal = fold ? new FoldJournal(pool, partitions, fold.ms, fold.onError) : undefined;
  const p = createIngestPipeline(pool, partitions, workers, writers, journal);
  await journal?.start();
  await p.decoder.warm();
  p.rates.start(exemplarRateIntervalMs);
  return p;
}

export function createIngestPipeline(
  pool: Pool,
  partitions: Partitions,
  workers: number,
  writers?: number,
  journal?: FoldJournal,
): IngestPipeline {
  return {
    decoder: new DecodePool(workers),
    writer: new GroupCommit(pool, partitions, { writers, journal }),
    rates: new ExemplarRates(pool),
    journal,
  };
}
