import { Type, type Static } from '@sinclair/typebox';
import { OpSchema, ViewSchema } from '../vocab-schemas.ts';
import { OPS, SERIES_CALLS_FROM, VIEWS } from '../vocab.ts';
import { DurationText, NStr, stringEnum, TimeText } from './common.ts';

/** A latency series (api.md "Series"). */
export const Series = Type.Object({
  id: Type.String(),
  service: Type.String(),
  op: stringEnum(OPS),
  view: stringEnum(VIEWS),
  name: Type.String(),
  peer: Type.Union([Type.String(), Type.Null()]),
  hosts: Type.Array(Type.String()),
  first_seen: Type.String({ format: 'date-time' }),
  last_seen: Type.String({ format: 'date-time' }),
  calls_from: stringEnum(SERIES_CALLS_FROM),
  metrics_not_counted: Type.Boolean(),
});
export type Series = Static<typeof Series>;

export const SeriesListQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
  op: Type.Optional(OpSchema),
  view: Type.Optional(ViewSchema),
  host: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  peer: Type.Optional(
    Type.String({ maxLength: 256, description: 'the callee of an edge series; empty: no peer' }),
  ),
  q: Type.Optional(
    Type.String({
      maxLength: 256,
      description:
        'words that must each appear (case-insensitive) in the service, op, name, peer or a host of the series',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: 'series per page, default 1000' }),
  ),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, description: 'series to skip (next_offset of the previous page)' }),
  ),
});
export type SeriesListQuery = Static<typeof SeriesListQuery>;

/** A page of series (by service, op, view, name, peer); `total` counts every match. */
export const SeriesList = Type.Object({
  series: Type.Array(Series),
  total: Type.Integer({ description: 'series matching the filters, on every page' }),
  next_offset: Type.Union([Type.Integer(), Type.Null()], {
    description: 'offset of the next page, null on the last',
  }),
});
export type SeriesList = Static<typeof SeriesList>;

/** The Explorer's pickers: a partial choice of labels, each narrowing the ones after it. */
export const SeriesOptionsQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: 256 })),
  op: Type.Optional(Type.String({ maxLength: 256 })),
  view: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  peer: Type.Optional(Type.String({ maxLength: 256, description: 'empty: any peer' })),
});
export type SeriesOptionsQuery = Static<typeof SeriesOptionsQuery>;

/** The distinct values of one label under the choices before it: the first 1,000 and how many. */
export const SeriesFacet = Type.Object({
  values: Type.Array(Type.String(), { description: 'sorted; at most 1,000' }),
  total: Type.Integer({ description: 'distinct values there are (more than values: truncated)' }),
});
export type SeriesFacet = Static<typeof SeriesFacet>;

export const SeriesOptions = Type.Object({
  selection: Type.Object(
    {
      service: Type.Optional(Type.String()),
      op: Type.Optional(Type.String()),
      view: Type.Optional(Type.String()),
      name: Type.Optional(Type.String()),
      peer: Type.Optional(Type.String()),
    },
    {
      description:
        'the choices asked for that some series has, each under the ones before it (an impossible later choice is dropped)',
    },
  ),
  services: SeriesFacet,
  ops: SeriesFacet,
  views: SeriesFacet,
  names: SeriesFacet,
  peers: SeriesFacet,
  matches: Type.Integer({ description: 'series matching every choice of selection' }),
});
export type SeriesOptions = Static<typeof SeriesOptions>;

export const SeriesIdParams = Type.Object({ id: Type.String() });
export type SeriesIdParams = Static<typeof SeriesIdParams>;

/** The querystring fields every per-step series read takes: time range, step, host and cohort filter. */
export function rangeQueryFields(stepDescription: string) {
  return {
    from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-6h; default now-6h')),
    to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
    step: Type.Optional(DurationText(`${stepDescription}; at least 1m`)),
    host: Type.Optional(Type.String({ maxLength: 256 })),
    attribute: Type.Optional(
      Type.String({
        pattern: '^[^=\\u0000]+=[^\\u0000]*$',
        maxLength: 1024,
        description: 'cohort filter key=value, e.g. os.version=4.15.0-36',
      }),
    ),
  };
}

/** Comma-separated quantiles between 0 and 1, at most `max` of them (default 0.5,0.99). */
export function quantileList(max: number) {
  const one = '(?:0(?:\\.[0-9]+)?|1(?:\\.0+)?|\\.[0-9]+)';
  return Type.String({
    pattern: `^${one}(?:,${one}){0,${max - 1}}$`,
    description: `comma-separated quantiles between 0 and 1 (up to ${max}), default 0.5,0.99`,
  });
}

/** The range every series read answers with: its bounds and the step it used. */
export function rangeResponseFields() {
  return { from: Type.String(), to: Type.String(), step_ms: Type.Number() };
}

export const QuantilesQuery = Type.Object({
  ...rangeQueryFields('e.g. 1m, 5m, 1h; default chosen for ~300 points'),
  q: Type.Optional(quantileList(10)),
  layout: Type.Optional(
    Type.Union([Type.Literal('points'), Type.Literal('columns')], {
      description:
        'points (default): one object per step; columns: one array per field, t in epoch ms (a third of the bytes, parses several times faster)',
    }),
  ),
});
export type QuantilesQuery = Static<typeof QuantilesQuery>;

export const QuantilePoint = Type.Object({
  t: Type.String(),
  count: Type.Number(),
  q: Type.Record(Type.String(), Type.Number()),
});
export type QuantilePoint = Static<typeof QuantilePoint>;

/** `layout=points` (the default). */
export const QuantilesPoints = Type.Object({
  series: Series,
  ...rangeResponseFields(),
  points: Type.Array(QuantilePoint),
});
export type QuantilesPoints = Static<typeof QuantilesPoints>;

export const QuantileColumns = Type.Object({
  t: Type.Array(Type.Number(), { description: 'step start, epoch ms, ascending' }),
  count: Type.Array(Type.Number()),
  q: Type.Record(Type.String(), Type.Array(Type.Number())),
});
export type QuantileColumns = Static<typeof QuantileColumns>;

/** `layout=columns`: one array per field (what the charts draw); steps without data are absent. */
export const QuantilesColumns = Type.Object({
  series: Series,
  ...rangeResponseFields(),
  columns: QuantileColumns,
});
export type QuantilesColumns = Static<typeof QuantilesColumns>;

export const QuantilesResponse = Type.Union([QuantilesPoints, QuantilesColumns]);
export type QuantilesResponse = Static<typeof QuantilesResponse>;

export const HeatmapQuery = Type.Object(
  rangeQueryFields('e.g. 1m, 5m, 1h; default chosen for ~360 columns'),
);
export type HeatmapQuery = Static<typeof HeatmapQuery>;

export const HeatmapPoint = Type.Object({
  t: Type.String(),
  count: Type.Number(),
  idx: Type.Array(Type.Integer(), {
    description: 'ascending log-bucket indices (bucketUpper(i) µs is the upper edge)',
  }),
  cnt: Type.Array(Type.Number()),
});
export type HeatmapPoint = Static<typeof HeatmapPoint>;

export const HeatmapResponse = Type.Object({
  series_id: Type.String(),
  ...rangeResponseFields(),
  points: Type.Array(HeatmapPoint),
});
export type HeatmapResponse = Static<typeof HeatmapResponse>;

export const CohortsResponse = Type.Object({
  series_id: Type.String(),
  attributes: Type.Array(
    Type.Object({
      key: Type.String(),
      values: Type.Array(
        Type.Object({
          value: Type.String(),
          hosts: Type.Array(Type.String()),
          last_seen: Type.String(),
        }),
      ),
    }),
  ),
});
export type CohortsResponse = Static<typeof CohortsResponse>;

/** A series no SLO watches (GET /api/v1/slos/unwatched). */
export const UnwatchedSeries = Type.Object({
  id: Type.String(),
  service: Type.String(),
  op: Type.String(),
  view: Type.String(),
  name: Type.String(),
  peer: NStr,
});
export type UnwatchedSeries = Static<typeof UnwatchedSeries>;

/** GET /api/v1/series/search: the Explorer's typeahead and list. */
export const SeriesSearchQuery = Type.Object({
  q: Type.Optional(
    Type.String({
      maxLength: 256,
      description:
        'words that must each appear (case-insensitive, any position) in the service, op, name, peer or a host of the series',
    }),
  ),
  from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-1h; default now-1h')),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'default 50' })),
});
export type SeriesSearchQuery = Static<typeof SeriesSearchQuery>;

const NullableMs = Type.Union([Type.Number(), Type.Null()]);

export const SeriesSummary = Type.Object({
  ...Series.properties,
  current: Type.Object(
    { p50_ms: NullableMs, p99_ms: NullableMs, count: Type.Number(), at: NStr },
    { description: 'the last step of the window that had calls (null levels when none did)' },
  ),
  spark: Type.Object({
    step_ms: Type.Number(),
    p99_ms: Type.Array(NullableMs, {
      description: 'p99 per step over the window, null without calls',
    }),
  }),
  regression: Type.Union([
    Type.Object({
      id: Type.String(),
      onset: Type.String(),
      status: Type.String({ description: 'open | acknowledged' }),
      metric: Type.String({ description: 'p50 | p99' }),
      ratio: Type.Number(),
    }),
    Type.Null(),
  ]),
  slo_ids: Type.Array(Type.String(), { description: 'SLOs whose selector covers this series' }),
});
export type SeriesSummary = Static<typeof SeriesSummary>;

export const SeriesSearchResult = Type.Object({
  series: Type.Array(SeriesSummary),
  total: Type.Number({ description: 'series matching q (the list holds at most `limit`)' }),
  from: Type.String(),
  to: Type.String(),
});
export type SeriesSearchResult = Static<typeof SeriesSearchResult>;

/** GET /api/v1/arriving: what data is coming in, for a newcomer's overview. */
export const ArrivingQuery = Type.Object({
  from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-1h; default now-1h')),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
});
export type ArrivingQuery = Static<typeof ArrivingQuery>;

const LastMinute = Type.Union([
  Type.Object({
    at: Type.String({ description: 'the latest minute of the window with calls' }),
    count: Type.Number(),
    p50_ms: Type.Number(),
    p99_ms: Type.Number(),
  }),
  Type.Null(),
]);

export const Arriving = Type.Object({
  from: Type.String(),
  to: Type.String(),
  services: Type.Array(
    Type.Object({
      service: Type.String(),
      series: Type.Number({ description: 'series with calls in the window' }),
      hosts: Type.Array(Type.String()),
      calls: Type.Number(),
      last_minute: LastMinute,
    }),
  ),
  hosts: Type.Array(
    Type.Object({
      host: Type.String(),
      services: Type.Array(Type.String()),
      series: Type.Number(),
      calls: Type.Number(),
      last_seen: Type.String(),
    }),
  ),
  totals: Type.Object({ services: Type.Number(), hosts: Type.Number(), series: Type.Number() }),
});
export type Arriving = Static<typeof Arriving>;

/** GET /api/v1/series/:id/hosts: the Explorer's "group by host" view. */
export const SeriesHostsQuery = Type.Object({
  from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-1h; default now-1h')),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
});
export type SeriesHostsQuery = Static<typeof SeriesHostsQuery>;

export const SeriesHosts = Type.Object({
  series_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  hosts: Type.Array(
    Type.Object({
      host: Type.String({ description: 'empty when the reporting resource has no host.name' }),
      current: SeriesSummary.properties.current,
      spark: SeriesSummary.properties.spark,
    }),
  ),
});
export type SeriesHosts = Static<typeof SeriesHosts>;
