/**
 * The ingest side of the cardinality guard: resolve series and resources for
 * a batch, drop the items whose new series was refused and count them (and
 * the items whose new resource was folded into the overflow resource).
 */
import type { ResourceLabels, SeriesLabels } from '@onset/core';
import { resourceKey, seriesKey, type Registry } from '../otlp/registry.ts';

interface Labelled {
  series: SeriesLabels;
  resource: ResourceLabels;
  /** How many spans or points the item stands for (a group of them); 1 when absent. */
  weight?: number;
}

export interface Admitted<T> {
  kept: T[];
  /** Items dropped (counted by weight): their series would be new beyond a limit. */
  dropped: number;
  seriesIds: Map<string, number>;
  resourceIds: Map<string, number>;
}

export async function admitObservations<T extends Labelled>(
  registry: Registry,
  items: T[],
): Promise<Admitted<T>> {
  const series = await registry.admitSeries(items.map((o) => o.series));
  const guard = registry.guard;
  let kept = items;
  let dropped = 0;
  if (series.refused.size && guard) {
    kept = [];
    for (const o of items) {
      const reason = series.refused.get(seriesKey(o.series));
      if (reason === undefined) kept.push(o);
      else {
        guard.drop('series', reason, o.series.service, o.weight ?? 1, o.series.name);
        dropped += o.weight ?? 1;
      }
    }
  }
  const resources = await registry.admitResources(kept.map((o) => o.resource));
  if (resources.folded.size && guard)
    for (const o of kept) {
      const reason = resources.folded.get(resourceKey(o.resource));
      if (reason !== undefined) guard.drop('resource', reason, o.resource.service, o.weight ?? 1);
    }
  return {
    kept,
    dropped,
    seriesIds: series.ids,
    resourceIds: resources.ids,
  };
}
