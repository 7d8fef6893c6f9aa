import type { Pool } from '../db/pool.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';
import { compactHistograms } from '../otlp/compact.ts';

/**
 * Housekeeping run every minute by the scheduler:
 * - make sure today's and tomorrow's partitions exist,
 * - drop partitions past retention (whole tables, never row deletes),
 * - fold the per-request histogram rows of closed minutes into one row each
 *   (otlp/compact.ts: the histogram tables are otlp/'s, db/owners.ts).
 */
export async function runMaintenance(
  pool: Pool,
  partitions: Partitions,
  opts: { rawRetentionMs: number; histogramRetentionMs: number },
  now = Date.now(),
): Promise<{ dropped: string[]; compacted: number }> {
  const days = [utcDay(now), utcDay(now + 86_400_000)];
  await partitions.ensure('observations', days);
  await partitions.ensure('span_durations', days);
  await partitions.ensure('histograms', days);
  await partitions.ensure('histograms_hourly', days);
  const dropped = [
    ...(await partitions.dropOlderThan('observations', now - opts.rawRetentionMs)),
    ...(await partitions.dropOlderThan('span_durations', now - opts.rawRetentionMs)),
    ...(await partitions.dropOlderThan('histograms', now - opts.histogramRetentionMs)),
    ...(await partitions.dropOlderThan('histograms_hourly', now - opts.histogramRetentionMs)),
  ];
  const compacted = await compactHistograms(pool, partitions, now - 120_000);
  return { dropped, compacted };
}
