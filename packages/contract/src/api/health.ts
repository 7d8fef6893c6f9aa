import { Type, type Static } from '@sinclair/typebox';

/** GET /healthz and /readyz. */
export const HealthStatus = Type.Object({
  status: Type.String(),
  database: Type.Optional(Type.String()),
});
export type HealthStatus = Static<typeof HealthStatus>;
