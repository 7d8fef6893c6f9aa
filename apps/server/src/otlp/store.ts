import { resourceKey, seriesKey, type Registry } from './registry.ts';
import { admitObservations } from '../cardinality/admit.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';
import type { Observation } from './normalize-traces.ts';
import { CopyRows } from './copy-rows.ts';
import type { GroupCommit } from './group-commit.ts';

export interface StoreResult {
  inserted: number;
  duplicates: number;
  /** Spans dropped because their series would be new beyond a cardinality limit. */
  dropped: number;
}

const DAY_MS = 86_400_000;
/** Bytes of one encoded span without its attributes (ids, numbers and field headers). */
const FIXED_ROW_BYTES = 2 + 9 * 4 + 16 + 8 + 8 + 8 + 8 + 8 + 8 + 2;

/**
 * Store a request's observations: series and resources are resolved (their
 * own short statements, see registry.ts), the spans encoded as binary COPY
 * rows and written in one transaction together with the rows of concurrent
 * requests (group-commit.ts, write-spans.ts). Returns only after PostgreSQL
 * has committed.
 */
export async function storeObservations(
  writer: GroupCommit,
  registry: Registry,
  partitions: Partitions,
  obs: Observation[],
): Promise<StoreResult> {
  if (!obs.length) return { inserted: 0, duplicates: 0, dropped: 0 };
  const admitted = await admitObservations(registry, obs);
  const { seriesIds, resourceIds, dropped } = admitted;
  obs = admitted.kept;
  if (!obs.length) return { inserted: 0, duplicates: 0, dropped };

  const n = obs.length;
  const rows = new CopyRows(n * (FIXED_ROW_BYTES + 64));
  const links = new Map<string, [number, number]>();
  const minuteDays = new Set<number>();
  for (let i = 0; i < n; i++) {
    const o = obs[i]!;
    const s = seriesIds.get(seriesKey(o.series))!;
    const r = resourceIds.get(resourceKey(o.resource))!;
    const link = `${s}:${r}`;
    if (!links.has(link)) links.set(link, [s, r]);
    minuteDays.add(Math.floor(o.startMs / DAY_MS));
    rows.reserve(FIXED_ROW_BYTES);
    rows.row(9);
    rows.bytes(o.traceId);
    rows.bytes(o.spanId);
    if (o.parentSpanId) rows.bytes(o.parentSpanId);
    else rows.null();
    rows.int8(s);
    rows.int8(r);
    rows.timestampMs(o.startMs);
    rows.float8(o.durationUs);
    rows.int2(o.kind);
    if (o.attrs === null) rows.null();
    else rows.jsonb(o.attrs);
  }
  await partitions.ensure(
    'histograms',
    [...minuteDays].map((d) => utcDay(d * DAY_MS)),
  );
  await registry.link([...links.values()]);

  const written = await writer.write(rows.view(), n);
  return { ...written, dropped };
}
