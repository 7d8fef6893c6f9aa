/**
 * Grouped reads (api.md "Series", "Regressions"): one series split into one
 * line per host or per value of a resource attribute (service.version,
 * os.version, dependency.*, any cohort attribute), and a regression's cohort
 * as two lines, its slow hosts and the fast rest.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DurationText, TimeText } from './common.ts';
import { QuantileColumns, quantileList, rangeResponseFields } from './series.ts';
import { Level } from './regressions.ts';

/** The window fields of the grouped reads (no host or attribute filter: they split instead). */
function windowFields() {
  return {
    from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-6h; default now-6h')),
    to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
    step: Type.Optional(
      DurationText('e.g. 1m, 5m, 1h; default chosen for ~300 points; at least 1m'),
    ),
    q: Type.Optional(quantileList(4)),
  };
}

export const SeriesGroupsQuery = Type.Object({
  by: Type.String({
    minLength: 1,
    maxLength: 256,
    pattern: '^[^\\u0000]+$',
    description:
      'host (the host.name of each host), or a resource attribute: service.version, os.version, dependency.hyper, any key GET /series/{id}/cohorts lists',
  }),
  ...windowFields(),
  host: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000]+$',
      description:
        "only this host's calls (the Explorer's host filter): its groups by version or attribute",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 20,
      description: 'groups answered, most calls first; default 8',
    }),
  ),
});
export type SeriesGroupsQuery = Static<typeof SeriesGroupsQuery>;

export const SeriesGroup = Type.Object({
  value: Type.Union([Type.String(), Type.Null()], {
    description: 'the host or the attribute value; null: the resources that do not report it',
  }),
  hosts: Type.Array(Type.String(), { description: 'hosts whose calls are in this group' }),
  count: Type.Number({ description: 'calls in the window' }),
  columns: QuantileColumns,
});
export type SeriesGroup = Static<typeof SeriesGroup>;

/** GET /api/v1/series/{id}/groups. */
export const SeriesGroups = Type.Object({
  series_id: Type.String(),
  by: Type.String(),
  ...rangeResponseFields(),
  host: Type.Union([Type.String(), Type.Null()], {
    description: "the host whose calls were grouped (the host query); null: every host's",
  }),
  groups: Type.Array(SeriesGroup, { description: 'most calls first, at most limit' }),
  total_groups: Type.Integer({
    minimum: 0,
    description: 'groups with calls in the window (more than groups when limit cut the list)',
  }),
});
export type SeriesGroups = Static<typeof SeriesGroups>;

export const RegressionCohortQuery = Type.Object(windowFields());
export type RegressionCohortQuery = Static<typeof RegressionCohortQuery>;

export const CohortSide = Type.Object({
  side: Type.Union([Type.Literal('slow'), Type.Literal('fast')]),
  values: Type.Array(Type.String(), { description: "the cohort attribute's values on this side" }),
  hosts: Type.Array(Type.String(), { description: 'the cohort’s slow_hosts, or its fast_hosts' }),
  levels: Type.Union([Type.Object({ before: Level, after: Level }), Type.Null()], {
    description: "the regression's levels of this side (cohort.levels), as attribution found them",
  }),
  count: Type.Number({ description: 'calls of these hosts in the window' }),
  columns: QuantileColumns,
});
export type CohortSide = Static<typeof CohortSide>;

/** GET /api/v1/regressions/{id}/cohort: the regression's series, one line per side of its cohort. */
export const RegressionCohortLines = Type.Object({
  regression_id: Type.String(),
  series_id: Type.String(),
  attribute: Type.Union([Type.String(), Type.Null()], {
    description: 'the cohort attribute; null (and no sides) when the regression has no cohort',
  }),
  ...rangeResponseFields(),
  sides: Type.Array(CohortSide, { description: 'slow, then fast' }),
});
export type RegressionCohortLines = Static<typeof RegressionCohortLines>;
