import { Type, type Static } from '@sinclair/typebox';
import { NNum } from './common.ts';
import { DurationText, TimeText } from './common.ts';
import { QuantileColumns, Series, quantileList, rangeResponseFields } from './series.ts';

/** GET /api/v1/series/{id}/edge: range and step as for quantiles, plus the instant to compare around. */
export const EdgeQuery = Type.Object({
  from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-6h; default now-6h')),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
  step: Type.Optional(DurationText('e.g. 1m, 5m, 1h; at least 1m; default chosen for ~360 points')),
  q: Type.Optional(quantileList(4)),
  onset: Type.Optional(
    TimeText('summarise each view before and after this time (e.g. a regression onset)'),
  ),
});
export type EdgeQuery = Static<typeof EdgeQuery>;

export const EdgeViewSummary = Type.Object({
  typical_ms: NNum,
  before_ms: NNum,
  after_ms: NNum,
});
export type EdgeViewSummary = Static<typeof EdgeViewSummary>;

export const EdgeViewName = Type.Union([
  Type.Literal('client'),
  Type.Literal('server'),
  Type.Literal('gap'),
]);

/** One view of the edge: its series (null when not reported), quantile columns and their summary per quantile. */
export const EdgeViewData = Type.Object({
  view: EdgeViewName,
  series: Type.Union([Series, Type.Null()]),
  columns: Type.Union([QuantileColumns, Type.Null()]),
  summary: Type.Record(Type.String(), EdgeViewSummary, {
    description: 'per quantile: median over the range, and before/after `onset` when given',
  }),
});
export type EdgeViewData = Static<typeof EdgeViewData>;

/** The client, server and gap views of the edge a series belongs to, as the server pairs them. */
export const EdgeResponse = Type.Object({
  series_id: Type.String(),
  caller: Type.Union([Type.String(), Type.Null()]),
  callee: Type.Union([Type.String(), Type.Null()]),
  ...rangeResponseFields(),
  views: Type.Array(EdgeViewData),
  verdict: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
    description: 'per quantile: which side changed, in words; null when nothing to say',
  }),
});
export type EdgeResponse = Static<typeof EdgeResponse>;
