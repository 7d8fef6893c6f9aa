import { Type, type Static } from '@sinclair/typebox';
import { OpSchema, SeveritySchema } from '../vocab-schemas.ts';
import {
  ALERT_STATUSES,
  ALERT_TYPES,
  DELIVERY_STATUSES,
  PAGING_STATES,
  SEVERITIES,
  TIMELINE_KINDS,
  WEBHOOK_FORMATS,
} from '../vocab.ts';
import { literalUnion } from '../vocab-schemas.ts';
import { DurationText, NStr, NumericIdParams, stringEnum, TimeText } from './common.ts';

/**
 * One webhook's delivery of one alert event (api.md "Delivery truth"):
 * `delivered` only once the receiver answered 2xx; `failing` while attempts
 * fail and are retried; `gave_up` when final (4xx) or expired.
 */
export const AlertNotification = Type.Object({
  webhook_id: Type.String(),
  webhook_name: NStr,
  format: stringEnum(WEBHOOK_FORMATS),
  event: Type.String({ description: 'firing | resolved' }),
  state: Type.String({ description: 'delivered | pending | failing | gave_up' }),
  status: stringEnum(DELIVERY_STATUSES, 'pending | delivered | failed | expired'),
  attempts: Type.Integer(),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: NStr,
  delivered_at: NStr,
  failing_since: Type.Union([Type.String(), Type.Null()], {
    description: 'first failed attempt of an undelivered notification',
  }),
  next_attempt_at: NStr,
});
export type AlertNotification = Static<typeof AlertNotification>;

/**
 * Whether the alert's firing reached anyone, computed by the server from its
 * notifications: `paged` (every receiver confirmed), `failing` (a receiver
 * has not confirmed and its attempts fail), `pending` (queued, not tried
 * yet), `silenced` (held by a silence), `no_webhook` (nobody to page).
 */
export const AlertPaging = Type.Object({
  state: stringEnum(PAGING_STATES),
  silenced_by: NStr,
  delivered: Type.Integer({ description: 'receivers that confirmed the firing' }),
  failing: Type.Integer({ description: 'receivers whose firing is failing or given up' }),
  pending: Type.Integer(),
});
export type AlertPaging = Static<typeof AlertPaging>;

/** One step of an alert's or a regression's lifecycle (api.md "Lifecycle timeline"). */
export const TimelineEntry = Type.Object({
  kind: stringEnum(TIMELINE_KINDS),
  at: Type.String(),
  actor: NStr,
  comment: NStr,
  alert_id: NStr,
  webhook_id: NStr,
  webhook_name: NStr,
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: NStr,
  detail: Type.Record(Type.String(), Type.Unknown()),
});
export type TimelineEntry = Static<typeof TimelineEntry>;

/**
 * What an alert says (api.md "Alert text"), rendered by the server from the
 * alert's own numbers, once for every reader: the UI's heading, every webhook
 * format and MCP show these strings. `lines`: one per quantile or burn
 * window, each with its own numbers; `cause`: the incident's likeliest cause
 * in one line (a mechanism, a deploy, a cohort, the slow share), or null.
 */
export const AlertTextLine = Type.Object({ label: Type.String(), text: Type.String() });
export type AlertTextLine = Static<typeof AlertTextLine>;
export const AlertText = Type.Object({
  title: Type.String(),
  cause: NStr,
  lines: Type.Array(AlertTextLine),
});
export type AlertText = Static<typeof AlertText>;

/**
 * A silence as shown where its alert or regression appears (api.md
 * "Silences"): until when (`ends_at`), by whom (`created_by`), why
 * (`comment`), and whether it still holds (`active`).
 */
export const SilenceRef = Type.Object({
  id: Type.String(),
  starts_at: Type.String(),
  ends_at: Type.String({ description: 'silenced until' }),
  created_by: NStr,
  comment: Type.String({ description: 'why' }),
  active: Type.Boolean(),
});
export type SilenceRef = Static<typeof SilenceRef>;

/**
 * An episode that began because what it is about was reopened (a resolved
 * regression reopened by hand): when, by whom and why, from its history.
 */
export const AlertReopened = Type.Object({ at: Type.String(), by: NStr, comment: NStr });
export type AlertReopened = Static<typeof AlertReopened>;

/** An alert episode (api.md "Alerts"). */
export const Alert = Type.Object(
  {
    id: Type.String(),
    type: stringEnum(ALERT_TYPES, 'slo_burn | regression | deploy_verdict'),
    severity: stringEnum(SEVERITIES, 'page | ticket'),
    status: stringEnum(ALERT_STATUSES, 'firing | resolved'),
    title: Type.String({ description: 'text.title: the heading every reader shows' }),
    text: AlertText,
    service: NStr,
    op: NStr,
    view: NStr,
    series_name: NStr,
    slo_id: NStr,
    regression_id: NStr,
    burn_rate: Type.Union([Type.Number(), Type.Null()]),
    window: NStr,
    started_at: Type.String(),
    resolved_at: NStr,
    dedup_key: Type.String(),
    url: Type.String(),
    notified: Type.Boolean({ description: 'firing was sent to webhooks (false while silenced)' }),
    silenced_by: NStr,
    silence: Type.Union([SilenceRef, Type.Null()], {
      description: 'the silence silenced_by names (until, by, why; active or ended), else null',
    }),
    acknowledged: Type.Union([
      Type.Object({ at: Type.String(), by: NStr, comment: NStr }),
      Type.Null(),
    ]),
    reopened: Type.Union([AlertReopened, Type.Null()], {
      description: 'the last reopen this episode records (who, when, why), else null',
    }),
    notifications: Type.Array(AlertNotification),
    paging: AlertPaging,
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: true },
);
export type Alert = Static<typeof Alert>;

/** One entry of an alert's history. */
export const AlertEvent = Type.Object({
  at: Type.String(),
  kind: Type.String(),
  actor: NStr,
  detail: Type.Record(Type.String(), Type.Unknown()),
});
export type AlertEvent = Static<typeof AlertEvent>;

export const AlertWithEvents = Type.Intersect([
  Alert,
  Type.Object({ events: Type.Array(AlertEvent), timeline: Type.Array(TimelineEntry) }),
]);
export type AlertWithEvents = Static<typeof AlertWithEvents>;

export const AlertListQuery = Type.Object({
  status: Type.Optional(literalUnion(ALERT_STATUSES)),
  type: Type.Optional(literalUnion(ALERT_TYPES)),
  severity: Type.Optional(SeveritySchema),
  service: Type.Optional(Type.String({ maxLength: 256 })),
  slo_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
  regression_id: Type.Optional(Type.String({ maxLength: 64 })),
  since: Type.Optional(TimeText('RFC 3339, epoch ms or now-7d; alerts started or resolved since')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type AlertListQuery = Static<typeof AlertListQuery>;

export const AlertList = Type.Object({ alerts: Type.Array(Alert) });
export type AlertList = Static<typeof AlertList>;

export const AlertIdParams = NumericIdParams;
export type AlertIdParams = Static<typeof AlertIdParams>;

export const AlertAck = Type.Object(
  {
    by: Type.Optional(Type.String({ maxLength: 200 })),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type AlertAck = Static<typeof AlertAck>;

/** POST /api/v1/alerts/{id}/resolve: who resolved it and why. */
export const AlertResolve = AlertAck;
export type AlertResolve = Static<typeof AlertResolve>;

/** GET /api/v1/regressions/{id}/timeline: the regression's lifecycle and its alerts. */
export const RegressionTimeline = Type.Object({
  timeline: Type.Array(TimelineEntry),
  alerts: Type.Array(Alert),
});
export type RegressionTimeline = Static<typeof RegressionTimeline>;

/** Alert ids for one action on several alerts at once (the inbox's bulk actions). */
const AlertIds = Type.Array(Type.String({ pattern: '^[0-9]{1,18}$' }), {
  minItems: 1,
  maxItems: 200,
  uniqueItems: true,
});

/** POST /api/v1/alerts/ack: acknowledge several alerts at once, all or none. */
export const AlertBulkAck = Type.Object(
  {
    ids: AlertIds,
    by: Type.Optional(Type.String({ maxLength: 200 })),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type AlertBulkAck = Static<typeof AlertBulkAck>;

/**
 * POST /api/v1/alerts/silence: silence what each alert is about (its SLO, else its service and
 * op), one silence per distinct matcher, all or none.
 */
export const AlertBulkSilence = Type.Object(
  {
    ids: AlertIds,
    ends_at: Type.Optional(TimeText('RFC 3339 or epoch ms (or give duration)')),
    duration: Type.Optional(DurationText('e.g. 2h, instead of ends_at')),
    comment: Type.String({ minLength: 1, maxLength: 2000 }),
    created_by: Type.Optional(Type.String({ maxLength: 200 })),
  },
  {
    additionalProperties: false,
    anyOf: [{ required: ['ends_at'] }, { required: ['duration'] }],
  },
);
export type AlertBulkSilence = Static<typeof AlertBulkSilence>;

export const SilenceInput = Type.Object(
  {
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    slo_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
    op: Type.Optional(OpSchema),
    starts_at: Type.Optional(TimeText('RFC 3339, epoch ms or now-1h; default now')),
    ends_at: Type.Optional(TimeText('RFC 3339 or epoch ms (or give duration)')),
    duration: Type.Optional(DurationText('e.g. 2h, instead of ends_at')),
    comment: Type.String({ minLength: 1, maxLength: 2000 }),
    created_by: Type.Optional(Type.String({ maxLength: 200 })),
  },
  {
    additionalProperties: false,
    // At least one matcher, and an end (ends_at or duration).
    allOf: [
      { anyOf: [{ required: ['service'] }, { required: ['slo_id'] }, { required: ['op'] }] },
      { anyOf: [{ required: ['ends_at'] }, { required: ['duration'] }] },
    ],
  },
);
export type SilenceInput = Static<typeof SilenceInput>;

export const Silence = Type.Object({
  id: Type.String(),
  service: NStr,
  slo_id: NStr,
  op: NStr,
  starts_at: Type.String(),
  ends_at: Type.String(),
  comment: Type.String(),
  created_by: NStr,
  created_at: Type.String(),
  active: Type.Boolean(),
});
export type Silence = Static<typeof Silence>;

/** The answer of POST /api/v1/alerts/silence: the silences made and the alerts as they are now. */
export const AlertBulkSilenced = Type.Object({
  silences: Type.Array(Silence),
  alerts: Type.Array(Alert),
});
export type AlertBulkSilenced = Static<typeof AlertBulkSilenced>;

export const SilenceListQuery = Type.Object({ active: Type.Optional(Type.Boolean()) });
export type SilenceListQuery = Static<typeof SilenceListQuery>;

export const SilenceList = Type.Object({ silences: Type.Array(Silence) });
export type SilenceList = Static<typeof SilenceList>;
