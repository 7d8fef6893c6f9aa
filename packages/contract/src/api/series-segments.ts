import { Type, type Static } from '@sinclair/typebox';
import { TimeText } from './common.ts';

/** GET /api/v1/series/{id}/segments: the window's retrospective segmentation (at most 24 h of minutes). */
export const SegmentsQuery = Type.Object({
  from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-6h; default now-6h')),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
});
export type SegmentsQuery = Static<typeof SegmentsQuery>;

const Quantile = Type.Union([Type.Literal('p50'), Type.Literal('p99')]);

export const SegmentLine = Type.Object({
  from: Type.String({ description: 'first minute of the segment' }),
  to: Type.String({ description: 'the minute after its last' }),
  start_ms: Type.Number({ description: 'the fitted line at its first minute' }),
  end_ms: Type.Number({ description: 'the fitted line at its last minute' }),
});
export type SegmentLine = Static<typeof SegmentLine>;

export const SegmentChangeOut = Type.Object({
  onset: Type.String({ description: 'first minute of the new segment' }),
  metric: Quantile,
  direction: Type.Union([Type.Literal('regression'), Type.Literal('improvement')]),
  kind: Type.Union([Type.Literal('step'), Type.Literal('shift')], {
    description:
      "'step': at least the smallest step the detector reports (×1.2); 'shift': ×1.05 up to it",
  }),
  ratio: Type.Number({ description: 'the line after over the line before, at the onset' }),
  before_ms: Type.Number({ description: 'the line before, at the onset' }),
  after_ms: Type.Number({ description: 'the line after, at the onset' }),
});
export type SegmentChangeOut = Static<typeof SegmentChangeOut>;

export const SegmentsResponse = Type.Object({
  series_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  points: Type.Number({ description: 'minutes with data in the window' }),
  changes: Type.Array(SegmentChangeOut),
  segments: Type.Object({ p50: Type.Array(SegmentLine), p99: Type.Array(SegmentLine) }),
});
export type SegmentsResponse = Static<typeof SegmentsResponse>;
