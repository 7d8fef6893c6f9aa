/** The cardinality guard in /metrics: drops by kind and reason, entries and limits. */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CardinalityGuard, LimitKind } from './guard.ts';

const KINDS: readonly LimitKind[] = ['series', 'resource'];
const REASONS = ['service_limit', 'global_limit'] as const;

export function registerCardinalityMetrics(guard: CardinalityGuard, registry: Registry): void {
  new Counter({
    name: 'onset_cardinality_dropped_total',
    help:
      'Spans and data points hit by a cardinality limit, by kind and reason (service_limit | global_limit). ' +
      'kind="series": dropped, their series would have been new beyond the limit; ' +
      'kind="resource": stored under the service overflow resource instead of a new resource',
    labelNames: ['kind', 'reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const kind of KINDS)
        for (const reason of REASONS)
          this.inc({ kind, reason }, guard.dropped.get(`${kind}:${reason}`) ?? 0);
    },
  });
  new Gauge({
    name: 'onset_cardinality_entries',
    help: 'Series and resources registered (kind: series | resource), as the cardinality guard counts them',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      for (const kind of KINDS) this.set({ kind }, guard.budget(kind).count());
    },
  });
  new Gauge({
    name: 'onset_cardinality_limit',
    help: 'Cardinality limits (scope: service | global; 0 = no limit)',
    labelNames: ['kind', 'scope'] as const,
    registers: [registry],
    collect() {
      for (const kind of KINDS) {
        const b = guard.budget(kind);
        this.set({ kind, scope: 'service' }, b.perServiceLimit);
        this.set({ kind, scope: 'global' }, b.globalLimit);
      }
    },
  });
}
