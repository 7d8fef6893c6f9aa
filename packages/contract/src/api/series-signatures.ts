import { Type, type Static } from '@sinclair/typebox';
import { TimeText } from './common.ts';
import { Hint } from './evidence.ts';

/** GET /api/v1/series/{id}/signatures: the window read. */
export const SignaturesQuery = Type.Object({
  from: Type.Optional(
    TimeText('the window: RFC 3339, epoch ms or relative like now-1h; default now-1h'),
  ),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
});
export type SignaturesQuery = Static<typeof SignaturesQuery>;

/**
 * Known mechanisms whose signature a series' calls show in a window, whether or not anything
 * changed (a regression's hints compare before and after its onset; these need no onset).
 */
export const Signatures = Type.Object({
  series_id: Type.String(),
  from: Type.String({ description: 'RFC 3339' }),
  to: Type.String({ description: 'RFC 3339' }),
  calls: Type.Integer({
    minimum: 0,
    description: 'the exemplar calls read (raw spans kept within ONSET_RAW_RETENTION)',
  }),
  complete: Type.Boolean({ description: 'false when the window held more calls than were read' }),
  hints: Type.Array(Hint, { description: 'most confident first; empty when none matches' }),
});
export type Signatures = Static<typeof Signatures>;
