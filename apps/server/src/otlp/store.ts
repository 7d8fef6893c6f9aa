import { resourceKey, seriesKey, type Registry } from './registry.ts';
import { admitObservations } from '../cardinality/admit.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';
import { fillIds, type DecodedTraces } from './decode-traces.ts';
import type { GroupCommit } from './group-commit.ts';
import type { SpanBatch } from './span-folds.ts';
import type { ExemplarRates } from './exemplar-rates.ts';

export interface StoreResult {
  inserted: number;
  duplicates: number;
  /** Spans dropped because their series would be new beyond a cardinality limit. */
  dropped: number;
}

const DAY_MS = 86_400_000;

/**
 * Store a decoded export (decode-traces.ts): its distinct series and resources
 * are resolved once each (their own short statements, see registry.ts, under
 * the cardinality limits), their ids written into the encoded rows, and the
 * rows written in one transaction together with the rows of concurrent
 * requests (group-commit.ts, write-spans.ts). Returns only after PostgreSQL
 * has committed.
 */
export async function storeTraces(
  writer: GroupCommit,
  registry: Registry,
  partitions: Partitions,
  d: DecodedTraces,
  rates?: ExemplarRates,
): Promise<StoreResult> {
  if (!d.rowCount) return { inserted: 0, duplicates: 0, dropped: 0 };
  const admitted = await admitObservations(registry, d.groups);
  const { seriesIds, resourceIds, dropped } = admitted;
  const kept = new Set(admitted.kept);
  const links = new Map<string, [number, number]>();
  const ids = d.groups.map((g, i) => {
    if (!kept.has(g)) return null;
    const s = seriesIds.get(seriesKey(g.series))!;
    const r = resourceIds.get(resourceKey(g.resource))!;
    links.set(`${s}:${r}`, [s, r]);
    rates?.note(s, r, d.groupKeys[i]!);
    return [s, r] as const;
  });
  if (!links.size) return { inserted: 0, duplicates: 0, dropped };
  await partitions.ensure(
    'histograms',
    d.days.map((day) => utcDay(day * DAY_MS)),
  );
  await registry.link([...links.values()]);
  const { rows, count } = fillIds(d, ids);
  const batch: SpanBatch = {
    ids,
    group: d.rowGroup,
    minuteMs: d.rowMinuteMs,
    durationUs: d.rowDurationUs,
  };
  const written = await writer.write(rows, count, d.minStartMs, batch);
  return { ...written, dropped };
}
