import { Type, type Static } from '@sinclair/typebox';
import { VERDICT_OUTCOMES } from '../vocab.ts';
import { NO_NUL_PATTERN, stringEnum } from './common.ts';

/**
 * POST /api/v1/verdicts/flagger: the JSON a Flagger webhook sends (its documented
 * payload: the canary's name, namespace and phase, and the webhook's `metadata`
 * strings), read as "which deploy, and which answer opens the gate"
 * (api.md "Verdict gates"). The fields are the ones Flagger's CanaryWebhookPayload has;
 * metadata takes any string key and value, as a Canary's webhook metadata does.
 */
export const FlaggerWebhook = Type.Object(
  {
    name: Type.String({
      maxLength: 256,
      description: 'the canary; the service whose newest marker is judged, unless metadata says',
    }),
    namespace: Type.Optional(Type.String({ maxLength: 256 })),
    phase: Type.Optional(Type.String({ maxLength: 64 })),
    checksum: Type.Optional(Type.String({ maxLength: 256 })),
    metadata: Type.Optional(
      Type.Object(
        {
          deploy_id: Type.Optional(
            Type.String({ pattern: '^[0-9]{1,18}$', description: 'judge this marker' }),
          ),
          service: Type.Optional(
            Type.String({
              maxLength: 256,
              description: 'the newest marker of this service (default: name)',
            }),
          ),
          environment: Type.Optional(
            Type.String({ maxLength: 128, description: '… in this environment' }),
          ),
          expect: Type.Optional(
            stringEnum(
              ['pass', 'fail'] as const,
              'pass (default; confirm-promotion and rollout hooks): 200 once the verdict is pass; fail (a rollback hook): 200 once it is fail',
            ),
          ),
          inconclusive: Type.Optional(
            stringEnum(
              ['pass', 'fail', 'hold'] as const,
              'read an inconclusive verdict as pass or fail; hold (default): neither',
            ),
          ),
        },
        {
          additionalProperties: Type.String({ maxLength: 4096 }),
          propertyNames: Type.String({ pattern: NO_NUL_PATTERN, maxLength: 256 }),
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type FlaggerWebhook = Static<typeof FlaggerWebhook>;

/** The gate's answer: 200 when it opens, 412 when it stays shut (Flagger reads any non-2xx as no). */
export const VerdictGate = Type.Object({
  open: Type.Boolean(),
  deploy_id: Type.String(),
  verdict: stringEnum(VERDICT_OUTCOMES),
  reason: Type.String({ description: "the verdict's one line" }),
  expect: stringEnum(['pass', 'fail'] as const),
});
export type VerdictGate = Static<typeof VerdictGate>;
