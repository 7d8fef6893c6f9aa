import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AlertNotification, AlertPaging } from './alerts.ts';
import { OpSchema, ViewSchema } from '../vocab-schemas.ts';
import { SEVERITIES } from '../vocab.ts';
import { DurationText, NNum, NStr, NumericIdParams, stringEnum, TimeText } from './common.ts';
import { UnwatchedSeries } from './series.ts';

/** The burn-rate windows an SLO status reports, each with the same schema. */
export const SLO_STATUS_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;
const perWindow = <T extends TSchema>(t: T) =>
  Type.Object({ '5m': t, '30m': t, '1h': t, '2h': t, '6h': t, '1d': t, '3d': t });

export const AlertTiersInput = Type.Object(
  {
    page_1h: Type.Optional(
      Type.Boolean({ description: 'page at 14.4× (30d-equivalent) over 1 h and 5 m' }),
    ),
    page_6h: Type.Optional(Type.Boolean({ description: 'page at 6× over 6 h and 30 m' })),
    ticket_1d: Type.Optional(Type.Boolean({ description: 'ticket at 3× over 1 d and 2 h' })),
    ticket_3d: Type.Optional(Type.Boolean({ description: 'ticket at 1× over 3 d and 6 h' })),
  },
  { additionalProperties: false },
);
export type AlertTiersInput = Static<typeof AlertTiersInput>;

/** The JSON body of POST/PUT /api/v1/slos (api.md "SLOs", extended). */
export const SloInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    op: Type.Optional(OpSchema),
    view: Type.Optional(ViewSchema),
    name_match: Type.Optional(
      Type.String({
        maxLength: 512,
        description: 'regular expression on the series name (PostgreSQL ~)',
      }),
    ),
    peer: Type.Optional(Type.String({ maxLength: 256 })),
    series_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,18}$',
        description: 'watch exactly this series; threshold defaults to the suggestion',
      }),
    ),
    threshold_ms: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 30 * 86_400_000 })),
    objective: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
    window: Type.Optional(
      Type.String({
        maxLength: 32,
        description: 'rolling "28d", "7d", "36h"…; calendar month "1M"',
      }),
    ),
    calendar: Type.Optional(
      Type.Boolean({ description: 'calendar window: 1d, 1w or 1M (1M is always calendar)' }),
    ),
    time_zone: Type.Optional(
      Type.String({ maxLength: 64, description: 'IANA zone for calendar windows; default UTC' }),
    ),
    alert_tiers: Type.Optional(AlertTiersInput),
    min_events: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    min_bad_events: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);
export type SloInput = Static<typeof SloInput>;

/** Media types an SLO body may also come in: OpenSLO v1 YAML. */
export const SLO_YAML_TYPES = [
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'application/openslo+yaml',
] as const;

/** POST/PUT body: JSON (SloInput) or an OpenSLO YAML document. */
export const SloBody = {
  content: {
    'application/json': { schema: SloInput },
    ...Object.fromEntries(
      SLO_YAML_TYPES.map((t) => [
        t,
        {
          schema: Type.String({
            description: 'OpenSLO v1 YAML (kind: SLO, threshold latency SLI)',
          }),
        },
      ]),
    ),
  },
};

/** One burn-rate tier of an SLO, as evaluated now. */
export const SloTier = Type.Object({
  name: Type.String(),
  severity: stringEnum(SEVERITIES),
  long: Type.String(),
  short: Type.String(),
  enabled: Type.Boolean(),
  factor: Type.Number(),
  burn_long: NNum,
  burn_short: NNum,
  events_long: Type.Number(),
  events_short: Type.Number(),
  firing: Type.Boolean(),
});
export type SloTier = Static<typeof SloTier>;

export const SloStatus = Type.Object({
  evaluated_at: Type.String(),
  window_start: Type.String(),
  window_end: Type.String(),
  sli: NNum,
  good: Type.Number(),
  total: Type.Number(),
  budget_remaining: Type.Number({ description: '1 = untouched, 0 = spent, negative = SLO broken' }),
  burn_rates: perWindow(NNum),
  events: perWindow(Type.Number()),
  tiers: Type.Array(SloTier),
  alert: Type.Union([
    Type.Object({
      id: Type.String(),
      severity: stringEnum(SEVERITIES),
      since: Type.String(),
      acknowledged: Type.Boolean(),
      paging: Type.Optional(AlertPaging),
      notifications: Type.Optional(Type.Array(AlertNotification)),
    }),
    Type.Null(),
  ]),
  exact_since: NStr,
});
export type SloStatus = Static<typeof SloStatus>;

export const Slo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: NStr,
  service: Type.String(),
  op: NStr,
  view: NStr,
  name_match: NStr,
  peer: NStr,
  series_id: NStr,
  threshold_ms: Type.Number(),
  objective: Type.Number(),
  window: Type.String(),
  calendar: Type.Boolean(),
  time_zone: Type.String(),
  alert_tiers: Type.Record(Type.String(), Type.Boolean()),
  min_events: Type.Integer(),
  min_bad_events: Type.Integer(),
  labels: Type.Record(Type.String(), Type.String()),
  source: Type.String(),
  exact_since: NStr,
  created_at: Type.String(),
  updated_at: Type.String(),
  status: SloStatus,
});
export type Slo = Static<typeof Slo>;

/** POST /api/v1/slos answers the SLO, or `{slos}` when the YAML held several. */
export const SloCreated = Type.Union([Slo, Type.Object({ slos: Type.Array(Slo) })]);
export type SloCreated = Static<typeof SloCreated>;

export const SloIdParams = NumericIdParams;
export type SloIdParams = Static<typeof SloIdParams>;

export const SloListQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
});
export type SloListQuery = Static<typeof SloListQuery>;

export const SloList = Type.Object({ slos: Type.Array(Slo) });
export type SloList = Static<typeof SloList>;

export const SloGetQuery = Type.Object({
  at: Type.Optional(
    TimeText('evaluate as of this time (RFC 3339, epoch ms or now-1h); default now'),
  ),
});
export type SloGetQuery = Static<typeof SloGetQuery>;

export const UnwatchedQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
  op: Type.Optional(Type.String({ maxLength: 32 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
});
export type UnwatchedQuery = Static<typeof UnwatchedQuery>;

export const UnwatchedList = Type.Object({ series: Type.Array(UnwatchedSeries) });
export type UnwatchedList = Static<typeof UnwatchedList>;

export const SloSuggestionQuery = Type.Object({
  objective: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
  lookback: Type.Optional(DurationText('history to learn from; default 7d')),
});
export type SloSuggestionQuery = Static<typeof SloSuggestionQuery>;

export const SloSuggestion = Type.Object({
  slo: Type.Object({
    name: Type.String(),
    series_id: Type.String(),
    service: Type.String(),
    threshold_ms: Type.Number(),
    objective: Type.Number(),
    window: Type.String(),
  }),
  basis: Type.Object({
    from: Type.String(),
    to: Type.String(),
    events: Type.Number(),
    quantile_ms: Type.Number({
      description: 'the latency `objective` of the history stayed under',
    }),
    expected_sli: Type.Number({
      description: 'share of the history at or under the threshold (estimated from histograms)',
    }),
    before_regression: Type.Optional(
      Type.Object(
        {
          regression_id: Type.String(),
          onset: Type.String({ description: 'the history learnt from ends here (RFC 3339)' }),
          after_ms: Type.Number({
            description:
              "the regression's level since the onset at the quantile compared (p99 for objectives ≥ 95%, else p50); the threshold stays below it",
          }),
          quantile: Type.String({ description: 'p50 | p99' }),
        },
        {
          description:
            'present when the series has an open regression: the suggestion is learnt from the baseline before its onset, so the threshold does not swallow the regression',
        },
      ),
    ),
  }),
  watched_by: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
});
export type SloSuggestion = Static<typeof SloSuggestion>;
