import { Type, type Static } from '@sinclair/typebox';
import { HINT_IDS } from '../vocab.ts';
import { stringEnum } from './common.ts';

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
  exemplars: Type.Object({ before: Type.Array(Span), after: Type.Array(Span) }),
  attributes: Type.Array(AttributeLift),
  hints: Type.Array(Hint),
});
export type Evidence = Static<typeof Evidence>;
