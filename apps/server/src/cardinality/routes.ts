import type { FastifyInstance } from 'fastify';
import { operations, type CardinalityStatus } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { CardinalityGuard } from './guard.ts';

const MAX_SERVICES_SHOWN = 50;

/** What GET /api/v1/limits answers: limits, usage, drops since start, the services concerned. */
export function cardinalityStatus(guard: CardinalityGuard): CardinalityStatus {
  const atLimit = new Map<string, Set<'series' | 'resource'>>();
  for (const s of guard.series.servicesAtLimit())
    atLimit.set(s, new Set([...(atLimit.get(s) ?? []), 'series']));
  for (const s of guard.resources.servicesAtLimit())
    atLimit.set(s, new Set([...(atLimit.get(s) ?? []), 'resource']));
  const names = new Set([...atLimit.keys(), ...guard.byService.keys()]);
  const services = [...names].map((service) => {
    const d = guard.byService.get(service);
    return {
      service,
      series: guard.series.count(service),
      resources: guard.resources.count(service),
      at_limit: [...(atLimit.get(service) ?? [])].sort(),
      dropped_series: d?.series ?? 0,
      folded_resource: d?.resource ?? 0,
      last_drop: d ? new Date(d.lastAt).toISOString() : null,
      examples: d?.examples ?? [],
    };
  });
  services.sort(
    (a, b) =>
      b.dropped_series + b.folded_resource - (a.dropped_series + a.folded_resource) ||
      a.service.localeCompare(b.service),
  );
  const use = (b: CardinalityGuard['series']) => ({
    per_service: b.perServiceLimit,
    global: b.globalLimit,
    used: b.count(),
    global_reached: b.globalReached(),
  });
  const d = (k: `${'series' | 'resource'}:${'service_limit' | 'global_limit'}`) =>
    guard.dropped.get(k) ?? 0;
  return {
    series: use(guard.series),
    resources: use(guard.resources),
    dropped: {
      series: { service_limit: d('series:service_limit'), global_limit: d('series:global_limit') },
      resource: {
        service_limit: d('resource:service_limit'),
        global_limit: d('resource:global_limit'),
      },
    },
    since: new Date(guard.since).toISOString(),
    services: services.slice(0, MAX_SERVICES_SHOWN),
    other_services_dropped: guard.otherServices.series + guard.otherServices.resource,
  };
}

export async function limitsRoutes(
  app: FastifyInstance,
  deps: { registry: { guard?: CardinalityGuard }; pool: Pool },
): Promise<void> {
  // startOnset always gives the registry a guard; a registry without one has no limits.
  const guard =
    deps.registry.guard ??
    new CardinalityGuard(
      { seriesPerService: 0, series: 0, resourcesPerService: 0, resources: 0 },
      deps.pool,
    );
  app.get(
    '/limits',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['health'],
        summary: 'Cardinality limits, usage and drops',
        description:
          'Limits on series and resources (per service and global), how much is used, and the spans/data points ' +
          'dropped (new series refused) or folded into an overflow resource since the server started.',
        ...operations['GET /api/v1/limits'],
      },
    },
    async () => cardinalityStatus(guard),
  );
}
