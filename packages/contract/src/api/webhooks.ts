import { Type, type Static } from '@sinclair/typebox';
import { DeliveryStatusSchema, SeveritySchema, WebhookFormatSchema } from '../vocab-schemas.ts';
import { DELIVERY_EVENTS, DELIVERY_STATUSES } from '../vocab.ts';
import { NumericIdParams, stringEnum } from './common.ts';

/**
 * Credentials a receiver needs, sent with every request to it (docs/webhooks.md
 * "Credentials"): HTTP basic auth, a bearer token, or one custom header.
 * Stored like the secret and never returned: answers carry `WebhookAuthShown`.
 */
const BasicAuth = Type.Object(
  {
    type: Type.Literal('basic'),
    username: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:\\u0000-\\u001f]+$' }),
    password: Type.String({ maxLength: 512 }),
  },
  { additionalProperties: false },
);
const BearerAuth = Type.Object(
  {
    type: Type.Literal('bearer'),
    token: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' }),
  },
  { additionalProperties: false },
);
const HeaderAuth = Type.Object(
  {
    type: Type.Literal('header'),
    name: Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
      description: 'an HTTP header name (not one Onset sets itself)',
    }),
    value: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x20-\\x7e\\t]+$' }),
  },
  { additionalProperties: false },
);
/** `{"type": "none"}` on PUT removes a webhook's credentials. */
const NoAuth = Type.Object({ type: Type.Literal('none') }, { additionalProperties: false });
export const WebhookAuth = Type.Union([BasicAuth, BearerAuth, HeaderAuth]);
export type WebhookAuth = Static<typeof WebhookAuth>;

/** What answers show of a webhook's credentials: the kind, the user name or header name, never the secret part. */
export const WebhookAuthShown = Type.Object({
  type: Type.String({ description: 'basic | bearer | header' }),
  username: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});
export type WebhookAuthShown = Static<typeof WebhookAuthShown>;

/** POST /api/v1/webhooks (api.md "Alert webhooks"). */
export const WebhookInput = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\u0000]+[^\\u0000]*$',
      description: 'an http(s) URL with a host',
    }),
    format: Type.Optional(WebhookFormatSchema),
    secret: Type.Optional(
      Type.String({ maxLength: 512, description: 'HMAC-SHA256 key for X-Onset-Signature' }),
    ),
    routing_key: Type.Optional(
      Type.String({ maxLength: 256, description: 'PagerDuty Events v2 integration key' }),
    ),
    min_severity: Type.Optional(SeveritySchema),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    auth: Type.Optional(
      Type.Union([BasicAuth, BearerAuth, HeaderAuth, NoAuth], {
        description: 'credentials sent with every request ({"type": "none"} removes them)',
      }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type WebhookInput = Static<typeof WebhookInput>;

/** PUT /api/v1/webhooks/{id}: any subset of the input. */
export const WebhookUpdate = Type.Partial(WebhookInput, { additionalProperties: false });
export type WebhookUpdate = Static<typeof WebhookUpdate>;

/**
 * Is the receiver taking deliveries? `failing` when its latest attempt
 * failed (since: the first failure after its last success), `ok` when it
 * succeeded, `unused` when nothing was ever sent.
 */
export const WebhookHealth = Type.Object({
  state: Type.String({ description: 'ok | failing | unused' }),
  last_delivered_at: Type.Union([Type.String(), Type.Null()]),
  failing_since: Type.Union([Type.String(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  failed_attempts: Type.Integer({ description: 'failed attempts since the last success' }),
});
export type WebhookHealth = Static<typeof WebhookHealth>;

export const Webhook = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  url: Type.String({
    description:
      'where deliveries go, with token-like path segments and query values masked to their last 4 characters',
  }),
  format: WebhookFormatSchema,
  min_severity: SeveritySchema,
  enabled: Type.Boolean(),
  has_secret: Type.Boolean(),
  auth: Type.Optional(
    Type.Union([WebhookAuthShown, Type.Null()], {
      description: 'the kind of credentials sent, without their secret part',
    }),
  ),
  routing_key: Type.Union([Type.String(), Type.Null()], { description: 'masked' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  health: Type.Optional(WebhookHealth),
});
export type Webhook = Static<typeof Webhook>;

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) });
export type WebhookList = Static<typeof WebhookList>;

export const WebhookIdParams = NumericIdParams;
export type WebhookIdParams = Static<typeof WebhookIdParams>;

export const DeliveryAttempt = Type.Object({
  at: Type.String(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Number(),
});
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const Delivery = Type.Object({
  id: Type.String(),
  event: stringEnum(DELIVERY_EVENTS),
  alert_id: Type.Union([Type.String(), Type.Null()]),
  dedup_key: Type.String(),
  status: stringEnum(DELIVERY_STATUSES, 'pending | delivered | failed | expired'),
  attempts: Type.Integer(),
  created_at: Type.String(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  delivered_at: Type.Union([Type.String(), Type.Null()]),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  log: Type.Array(DeliveryAttempt),
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  status: Type.Optional(DeliveryStatusSchema),
});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const DeliveryList = Type.Object({ deliveries: Type.Array(Delivery) });
export type DeliveryList = Static<typeof DeliveryList>;
