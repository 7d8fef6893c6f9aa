import { Type, type Static } from '@sinclair/typebox';
import { HINT_IDS } from '../vocab.ts';
import { stringEnum, TimeText } from './common.ts';

/** The other half of an edge call: the callee's server span for a client exemplar (or the caller's for a server one). */
export const PairedSpan = Type.Object({
  span_id: Type.String({ pattern: '^[0-9a-f]{16}$' }),
  duration_ms: Type.Number(),
  host: Type.String(),
  service: Type.String(),
});
export type PairedSpan = Static<typeof PairedSpan>;

/** A raw span kept from the regression's series (api.md "Evidence"). */
export const Span = Type.Object({
  trace_id: Type.String({ pattern: '^[0-9a-f]{32}$' }),
  span_id: Type.String({ pattern: '^[0-9a-f]{16}$' }),
  start: Type.String({ description: 'RFC 3339' }),
  duration_ms: Type.Number(),
  host: Type.String(),
  service: Type.String(),
  attributes: Type.Record(
    Type.String(),
    Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
    {
      description:
        'the span attributes, then the resource attributes Onset keeps (os.version, service.version, …)',
    },
  ),
  trace_url: Type.Optional(
    Type.String({ description: 'set when ONSET_TRACE_URL_TEMPLATE is configured' }),
  ),
  role: stringEnum(
    ['typical', 'slowest'] as const,
    'typical: near the median of its side; slowest: its slowest',
  ),
  paired: Type.Optional(PairedSpan),
});
export type Span = Static<typeof Span>;

/** How much more often one attribute value appears among slow calls after the onset than before. */
export const AttributeLift = Type.Object({
  key: Type.String(),
  value: Type.String({ description: 'numbers are bucketed by powers of two, e.g. "2048–4095"' }),
  share_before: Type.Number({
    description: 'share of slow calls (slower than the before-p90) before the onset',
  }),
  share_after: Type.Number({ description: 'share of slow calls after the onset' }),
  lift: Type.Number({ description: 'share_after − share_before; most explanatory first' }),
  count_after: Type.Number({ description: 'slow calls after the onset with this value' }),
});
export type AttributeLift = Static<typeof AttributeLift>;

/** A known mechanism whose signature the data matches. */
export const Hint = Type.Object({
  id: stringEnum(HINT_IDS),
  title: Type.String(),
  detail: Type.String({
    description: 'plain language, with the measured numbers and what was checked',
  }),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
});
export type Hint = Static<typeof Hint>;

/** GET /api/v1/regressions/{id}/evidence. */
export const Evidence = Type.Object({
  exemplars: Type.Object({
    before: Type.Array(Span),
    after: Type.Array(Span),
    cohort: Type.Optional(
      Type.Object(
        {
          attribute: Type.String(),
          slow_hosts: Type.Array(Type.String()),
          fast_hosts: Type.Array(Type.String()),
          fast_after: Type.Array(Span, {
            description: 'calls of the fast hosts after the onset, picked like after',
          }),
        },
        {
          description:
            "set when the regression has a cohort: before and after are then its slow hosts' calls (the ones the headline describes), fast_after the fast rest's",
        },
      ),
    ),
  }),
  attributes: Type.Array(AttributeLift),
  hints: Type.Array(Hint),
});
export type Evidence = Static<typeof Evidence>;

/** GET /api/v1/traces/{trace_id}: the trace to read (32 hex digits, not all zero). */
export const TraceIdParams = Type.Object({
  trace_id: Type.String({
    pattern: '^[0-9a-fA-F]{32}$',
    description: 'the W3C trace id: 32 hex digits (not all zero)',
  }),
});
export type TraceIdParams = Static<typeof TraceIdParams>;

/** One stored span of a trace (api.md "Traces"). */
export const TraceSpan = Type.Object({
  span_id: Type.String({ pattern: '^[0-9a-f]{16}$' }),
  parent_span_id: Type.Union([Type.String({ pattern: '^[0-9a-f]{16}$' }), Type.Null()]),
  service: Type.String(),
  host: Type.String(),
  name: Type.String({ description: "the operation name of the span's series" }),
  op: Type.String(),
  view: Type.String(),
  series_id: Type.String(),
  kind: stringEnum(
    ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const,
    'the OTLP span kind',
  ),
  start: Type.String({ description: 'RFC 3339' }),
  offset_ms: Type.Number({ description: "start minus the trace's first start" }),
  duration_ms: Type.Number(),
  depth: Type.Integer({
    minimum: 0,
    description: 'parents above it among the stored spans (0: a root or its parent is not stored)',
  }),
  attributes: Type.Union(
    [
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
      Type.Null(),
    ],
    {
      description:
        'the span attributes when the span is an exemplar (kept with its attributes), else null',
    },
  ),
  resource_attributes: Type.Record(
    Type.String(),
    Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
    { description: 'the resource attributes Onset keeps (os.version, service.version, …)' },
  ),
});
export type TraceSpan = Static<typeof TraceSpan>;

export const Trace = Type.Object({
  trace_id: Type.String({ pattern: '^[0-9a-f]{32}$' }),
  start: Type.String({ description: 'the first span start, RFC 3339' }),
  duration_ms: Type.Number({ description: 'first start to last end' }),
  services: Type.Array(Type.String()),
  spans: Type.Array(TraceSpan, { description: 'in start order, parents before their children' }),
  truncated: Type.Boolean({ description: 'more spans are stored than the 2,000 returned' }),
  trace_url: Type.Optional(
    Type.String({ description: 'set when ONSET_TRACE_URL_TEMPLATE is configured' }),
  ),
});
export type Trace = Static<typeof Trace>;

/** GET /api/v1/series/{id}/compare: a selection of a window's calls against the rest. */
export const SelectionCompareQuery = Type.Object({
  from: Type.Optional(
    TimeText('the window: RFC 3339, epoch ms or relative like now-6h; default now-6h'),
  ),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
  sel_from: Type.Optional(
    TimeText('the selection starts here (default: the window start); inside the window'),
  ),
  sel_to: Type.Optional(TimeText('the selection ends here (default: the window end)')),
  min_ms: Type.Optional(
    Type.Number({ minimum: 0, description: 'the latency band: calls at least this slow, ms' }),
  ),
  max_ms: Type.Optional(
    Type.Number({ minimum: 0, description: 'the latency band: calls faster than this, ms' }),
  ),
});
export type SelectionCompareQuery = Static<typeof SelectionCompareQuery>;

/** How much more often one attribute value appears among the selected calls than among the rest. */
export const SelectionLift = Type.Object({
  key: Type.String(),
  value: Type.String({ description: 'numbers are bucketed by powers of two, e.g. "2048–4095"' }),
  share_selected: Type.Number({ description: 'share of the selected calls with this value' }),
  share_rest: Type.Number({ description: "share of the rest of the window's calls" }),
  lift: Type.Number({ description: 'share_selected − share_rest; most explanatory first' }),
  count_selected: Type.Integer(),
  count_rest: Type.Integer(),
});
export type SelectionLift = Static<typeof SelectionLift>;

export const SelectionCompare = Type.Object({
  series_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  selection: Type.Object({
    from: Type.String(),
    to: Type.String(),
    min_ms: Type.Union([Type.Number(), Type.Null()]),
    max_ms: Type.Union([Type.Number(), Type.Null()]),
  }),
  calls: Type.Object({
    selected: Type.Integer({ description: 'exemplar calls in the selection' }),
    rest: Type.Integer({ description: 'exemplar calls in the window outside it' }),
  }),
  all_calls: Type.Union(
    [
      Type.Object({
        selected: Type.Integer({ description: 'every stored call in the selection' }),
        rest: Type.Integer({ description: 'every stored call in the window outside it' }),
        from: Type.String({ description: 'the selection widened to whole minutes: its start' }),
        to: Type.String({ description: 'the selection widened to whole minutes: its end' }),
      }),
      Type.Null(),
    ],
    {
      description:
        "every call stored within raw retention on each side (the series' span durations, one array per start minute: the time range widened to whole minutes, from/to); null for an edge's client, server and gap views",
    },
  ),
  complete: Type.Boolean({
    description: 'false when the window held more exemplars than are read (the latest are)',
  }),
  raw_from: Type.String({
    description: 'raw spans are kept from about here (ONSET_RAW_RETENTION); older calls are gone',
  }),
  attributes: Type.Array(SelectionLift),
  exemplars: Type.Array(Span, { description: 'typical and slowest calls of the selection' }),
});
export type SelectionCompare = Static<typeof SelectionCompare>;
