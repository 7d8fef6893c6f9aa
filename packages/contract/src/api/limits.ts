import { Type, type Static } from '@sinclair/typebox';

const Count = Type.Integer({ minimum: 0 });

/** One cardinality limit and how much of it is used (0 = no limit). */
const LimitUse = Type.Object({
  per_service: Type.Integer({ minimum: 0, description: 'Limit per service; 0 = none' }),
  global: Type.Integer({ minimum: 0, description: 'Limit over all services; 0 = none' }),
  used: Type.Integer({ minimum: 0, description: 'Registered now (overflow resources excluded)' }),
  global_reached: Type.Boolean(),
});

/** A service that hit a limit: at its own limit now, or with drops since the server started. */
const ServiceLimitState = Type.Object({
  service: Type.String(),
  series: Count,
  resources: Count,
  /** Which per-service limits are reached now. */
  at_limit: Type.Array(Type.Union([Type.Literal('series'), Type.Literal('resource')])),
  /** Spans and data points dropped because their new series was refused. */
  dropped_series: Count,
  /** Spans and data points stored under the overflow resource instead of a new resource. */
  folded_resource: Count,
  last_drop: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  /** A few refused series names, to find the instrumentation that makes them. */
  examples: Type.Array(Type.String()),
});

/** GET /api/v1/limits: the cardinality guard (docs/api.md "Cardinality limits"). */
export const CardinalityStatus = Type.Object({
  series: LimitUse,
  resources: LimitUse,
  /** Totals since `since` (server start): kind series = dropped items, kind resource = folded items. */
  dropped: Type.Object({
    series: Type.Object({ service_limit: Count, global_limit: Count }),
    resource: Type.Object({ service_limit: Count, global_limit: Count }),
  }),
  since: Type.String({ format: 'date-time' }),
  /** Services at a limit or with drops, most dropped first (at most 50). */
  services: Type.Array(ServiceLimitState),
  /** Drops of services beyond the ones tracked one by one. */
  other_services_dropped: Count,
});
export type CardinalityStatus = Static<typeof CardinalityStatus>;
