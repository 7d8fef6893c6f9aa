import { Type, type Static } from '@sinclair/typebox';
import {
  OPS,
  REGRESSION_METRICS,
  REGRESSION_SHAPES,
  REGRESSION_STATUSES,
  VIEWS,
} from '../vocab.ts';
import { NStr, stringEnum, TimeText } from './common.ts';
import { Hint } from './evidence.ts';
import { SilenceRef } from './alerts.ts';

/** Latency of a series over a window (before the onset, or since). */
export const Level = Type.Object({
  p50_ms: Type.Number(),
  p99_ms: Type.Number(),
  count: Type.Number({ description: 'events in the window (after: since the onset)' }),
});
export type Level = Static<typeof Level>;

/** A deploy marker ranked as a possible cause of a regression. */
export const Suspect = Type.Object({
  deploy_id: Type.String({ description: 'the marker the suspect is named after' }),
  deploy_ids: Type.Optional(
    Type.Array(Type.String(), {
      description: 'every marker of this rollout (posted per host, inferred), deploy_id first',
    }),
  ),
  kind: Type.String({ description: 'a deploy kind: code | dependency | kernel | config | infra' }),
  service: NStr,
  component: NStr,
  from_version: NStr,
  to_version: NStr,
  hosts: Type.Array(Type.String(), {
    description:
      "the rollout's hosts: the regressed hosts it covers first, then the series' other hosts, then the rest",
  }),
  coverage: Type.Optional(
    Type.Union([
      Type.Object({
        covered: Type.Number({
          description: 'regressed hosts the rollout touched (the first of hosts)',
        }),
        regressed: Type.Number({
          description: 'hosts that regressed (the slow cohort, else the series)',
        }),
      }),
      Type.Null(),
    ]),
  ),
  series_hosts: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "how many of hosts (the first ones) feed this series; the rest are other services' hosts",
    }),
  ),
  at: Type.String({ description: 'when the rollout reached the regressed hosts (best fit)' }),
  source: Type.String({ description: 'api | inferred' }),
  commit: NStr,
  url: NStr,
  description: NStr,
  score: Type.Number({ description: '0..1, best first' }),
  reason: Type.String(),
});
export type Suspect = Static<typeof Suspect>;

/** Which hosts' attribute values are slow and which fast. */
export const Cohort = Type.Object({
  attribute: Type.String({
    description: 'e.g. os.version, dependency.hyper, onset.cohort.spawn_method, or host.name',
  }),
  slow: Type.Array(Type.String()),
  fast: Type.Array(Type.String()),
  slow_hosts: Type.Array(
    Type.String({ description: 'hosts that carry a slow value after the onset' }),
  ),
  fast_hosts: Type.Array(
    Type.String({ description: 'the others with data after it (never a slow host)' }),
  ),
  levels: Type.Optional(
    Type.Object(
      {
        slow: Type.Object({ before: Level, after: Level }),
        fast: Type.Object({ before: Level, after: Level }),
      },
      { description: "each side's levels: its hosts before the onset, its values after it" },
    ),
  ),
  explained: Type.Optional(
    Type.Number({
      description: 'share of the events after the onset on their value’s side (0..1)',
    }),
  ),
  changed: Type.Optional(
    Type.Boolean({
      description: 'the attribute changed at the onset (a host moved, or a new value)',
    }),
  ),
});
export type Cohort = Static<typeof Cohort>;

/**
 * One series' evidence of a regression (api.md "Regressions", `members`): a
 * regression is one incident, and each series on which its step was found is
 * a member with its own levels, onset and confidence.
 */
export const RegressionMember = Type.Object({
  series_id: Type.String(),
  service: Type.String(),
  op: stringEnum(OPS),
  view: stringEnum(VIEWS),
  name: Type.String(),
  peer: NStr,
  headline: Type.Boolean({
    description: 'the member that shows the step best; the regression’s own fields are its',
  }),
  onset: Type.String(),
  onset_uncertainty_ms: Type.Number(),
  detected_at: Type.String(),
  metric: stringEnum(REGRESSION_METRICS, 'the quantile that moved most: p50 | p99'),
  confidence: Type.Number(),
  before: Level,
  after: Level,
  ratio_p50: Type.Number(),
  ratio_p99: Type.Number(),
  hosts: Type.Array(Type.String(), {
    description: 'hosts that reported this series since the onset',
  }),
  recovered_at: Type.Union([Type.String(), Type.Null()], {
    description: 'set while this series is back at its before level',
  }),
});
export type RegressionMember = Static<typeof RegressionMember>;

/** A step change found by detection (api.md "Regressions"): one incident, headed by its clearest member. */
export const Regression = Type.Object({
  id: Type.String(),
  series_id: Type.String(),
  service: Type.String(),
  op: stringEnum(OPS),
  view: stringEnum(VIEWS),
  name: Type.String(),
  peer: NStr,
  host: Type.Union([Type.String(), Type.Null()], {
    description: 'set only when the step is confined to one host of several',
  }),
  onset: Type.String(),
  onset_uncertainty_ms: Type.Number(),
  detected_at: Type.String(),
  updated_at: Type.String(),
  metric: stringEnum(REGRESSION_METRICS, 'the quantile that moved most: p50 | p99'),
  confidence: Type.Number(),
  before: Level,
  after: Level,
  ratio_p50: Type.Number(),
  ratio_p99: Type.Number(),
  series_levels: Type.Optional(
    Type.Union(
      [
        Type.Object({
          before: Level,
          after: Level,
          ratio_p50: Type.Number(),
          ratio_p99: Type.Number(),
        }),
        Type.Null(),
      ],
      {
        description:
          'the whole series, when the step is confined to a cohort and before/after/ratios are the slow cohort’s; else null',
      },
    ),
  ),
  suspects: Type.Array(Suspect),
  cohort: Type.Union([Cohort, Type.Null()]),
  hints: Type.Array(Hint, {
    description: 'known mechanisms the raw spans match, most confident first (api.md "Evidence")',
  }),
  status: stringEnum(REGRESSION_STATUSES, 'open | acknowledged | resolved'),
  shape: Type.Optional(
    stringEnum(
      REGRESSION_SHAPES,
      'step (a level shift) | transient (a burst over within minutes: closed, never paged) | drift (a sustained ramp, reported once with drift_per_hour) | floor (a noisy p99 that settled onto a steady, higher band: a fixed wait such as a delayed ACK on a share of calls; see band); absent from servers before it: step',
    ),
  ),
  drift_per_hour: Type.Optional(
    Type.Union([Type.Number(), Type.Null()], {
      description:
        'for a drift: growth factor per hour of the moving quantile (1.2 = +20 % an hour, < 1 for a fall); else null',
    }),
  ),
  band: Type.Optional(
    Type.Union(
      [
        Type.Object({
          before_ms: Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }),
          after_ms: Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }),
        }),
        Type.Null(),
      ],
      {
        description:
          'for a floor: where most minutes’ p99 sat, [low, high] ms — the narrowest range holding half of the minutes after the onset, and of those before it; else null',
      },
    ),
  ),
  silence: Type.Optional(
    Type.Union([SilenceRef, Type.Null()], {
      description:
        'the active silence that holds its alert (by its service and op): until, by, why; else null',
    }),
  ),
  acknowledged_at: NStr,
  acknowledged_by: NStr,
  resolved_at: NStr,
  resolved_by: NStr,
  resolution: NStr,
  merged_into: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'the regression this one was merged into: found apart, they turned out to be one incident (its members moved there; this one is resolved by onset); else null. Absent from servers before it: null',
    }),
  ),
  own: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        "Onset's own noise: agent-probe (a step on the host agent's synthetic probe series) or onset-database (on Onset's own embedded PostgreSQL); such a regression never groups with another incident and never pages. Else null",
    }),
  ),
  members: Type.Array(RegressionMember, {
    description:
      'every series the incident was found on (client, gap and server views of an edge; several routes or executables of a service), headline first',
  }),
});
export type Regression = Static<typeof Regression>;

/** One word of the status filter. */
const STATUS_WORD = '(?:open|acknowledged|resolved|active|all)';

export const RegressionListQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
  op: Type.Optional(Type.String({ maxLength: 32 })),
  view: Type.Optional(Type.String({ maxLength: 32 })),
  name: Type.Optional(Type.String({ maxLength: 1024 })),
  peer: Type.Optional(Type.String({ maxLength: 256 })),
  series_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
  status: Type.Optional(
    Type.String({
      pattern: `^${STATUS_WORD}(?:,${STATUS_WORD})*$`,
      maxLength: 64,
      description:
        'open, acknowledged, resolved, active (= open,acknowledged) or all; comma-separated. Default all.',
    }),
  ),
  since: Type.Optional(TimeText('onset at or after: RFC 3339, epoch ms, or now-6h')),
  merged: Type.Optional(
    Type.Boolean({
      description:
        'also list regressions merged into another (merged_into set: found apart, one incident); default false: each incident once',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type RegressionListQuery = Static<typeof RegressionListQuery>;

export const RegressionList = Type.Object({ regressions: Type.Array(Regression) });
export type RegressionList = Static<typeof RegressionList>;

export const RegressionIdParams = Type.Object({ id: Type.String({ maxLength: 40 }) });
export type RegressionIdParams = Static<typeof RegressionIdParams>;

/** The body of ack / resolve / reopen (all optional; an empty body is fine). */
export const RegressionAction = Type.Union([
  Type.Object(
    {
      by: Type.Optional(Type.String({ maxLength: 200 })),
      comment: Type.Optional(Type.String({ maxLength: 2000 })),
    },
    // Closed like the alert ack: an unknown field is a mistake to report, not to drop.
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type RegressionAction = Static<typeof RegressionAction>;

export const DetectInput = Type.Union([
  Type.Object({
    upto: Type.Optional(
      TimeText(
        'examine minutes before this time only (backfills replaying history in order); not in the future; default: a minute ago',
      ),
    ),
    shards: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('owned')], {
        description:
          '`all` (default): every detection shard; `owned`: only the shards this server leases (what its scheduler runs)',
      }),
    ),
  }),
  Type.Null(),
]);
export type DetectInput = Static<typeof DetectInput>;

/** A step held back because its hosts lost CPU to the hypervisor at its onset. */
export const HeldStep = Type.Object({
  series_id: Type.String(),
  onset: Type.String({ format: 'date-time' }),
  hosts: Type.Array(Type.String()),
  steal_before_ms_per_s: Type.Number({
    description:
      'median ms of each second of CPU the hosts wanted that the hypervisor took, before the onset',
  }),
  steal_after_ms_per_s: Type.Number({ description: 'the same from the onset on' }),
});
export type HeldStep = Static<typeof HeldStep>;

/** What one detection pass did. */
export const DetectPass = Type.Object({
  skipped: Type.Optional(Type.Boolean()),
  through: Type.String({ description: 'minutes before this instant were examined' }),
  duration_ms: Type.Number(),
  series: Type.Object({
    total: Type.Number(),
    new: Type.Number(),
    fed: Type.Number(),
    points: Type.Number(),
  }),
  screened: Type.Number(),
  shards: Type.Optional(
    Type.Object(
      { count: Type.Number(), run: Type.Number() },
      { description: "detection shards this pass fed (`run`) of the cluster's `count`" },
    ),
  ),
  regressions: Type.Object({
    opened: Type.Number(),
    resolved: Type.Number(),
    updated: Type.Number(),
    grouped: Type.Optional(
      Type.Number({
        description: 'steps that joined the regression of their incident instead of opening one',
      }),
    ),
    held: Type.Optional(
      Type.Number({
        description:
          'steps not opened: their hosts lost CPU to the hypervisor at the onset and no deploy explains them',
      }),
    ),
    merged: Type.Optional(
      Type.Number({
        description:
          'regressions merged into another: found apart, a step showed they are one incident (merged_into)',
      }),
    ),
  }),
  held: Type.Optional(
    Type.Array(HeldStep, {
      description: 'the steps held back for host contention (docs/regressions.md)',
    }),
  ),
});
export type DetectPass = Static<typeof DetectPass>;

/** POST /api/v1/detect: edge pairing, marker inference and a detection pass. */
export const DetectResult = Type.Object({
  pairing: Type.Object({ pairs: Type.Number(), edges: Type.Number() }),
  inference: Type.Object({
    resources: Type.Number(),
    changes: Type.Number(),
    created: Type.Number(),
    extended: Type.Number(),
  }),
  detection: DetectPass,
});
export type DetectResult = Static<typeof DetectResult>;

/** GET /api/v1/detect: the last pass, and the one this server is running now (if any). */
export const DetectStatus = Type.Object({
  passes: Type.Number(),
  last: Type.Union([
    Type.Intersect([DetectPass, Type.Object({ started_at: Type.String() })]),
    Type.Null(),
  ]),
  running: Type.Optional(
    Type.Union([
      Type.Object({
        started_at: Type.String(),
        series_done: Type.Number(),
        series_total: Type.Number(),
      }),
      Type.Null(),
    ]),
  ),
  last_on_this_server: Type.Optional(
    Type.Union(
      [Type.Intersect([DetectPass, Type.Object({ started_at: Type.String() })]), Type.Null()],
      {
        description: 'the last pass this server ran (scheduled or requested), since it started',
      },
    ),
  ),
  shards: Type.Optional(
    Type.Union(
      [
        Type.Object({
          server: Type.String(),
          count: Type.Number(),
          owned: Type.Array(Type.Number()),
          series_owned: Type.Number(),
          servers: Type.Number(),
        }),
        Type.Null(),
      ],
      {
        description:
          'the detection shards this server leases and their series (null: its scheduler is off)',
      },
    ),
  ),
});
export type DetectStatus = Static<typeof DetectStatus>;
