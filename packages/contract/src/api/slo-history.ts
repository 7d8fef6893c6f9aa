import { Type, type Static } from '@sinclair/typebox';
import { SEVERITIES } from '../vocab.ts';
import { NNum, stringEnum, TimeText } from './common.ts';
import { SloTier } from './slos.ts';

/** GET /api/v1/slos/{id}/history: the range the charts show. */
export const SloHistoryQuery = Type.Object({
  from: Type.Optional(TimeText('RFC 3339, epoch ms or relative like now-6h; default now-6h')),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default now')),
});
export type SloHistoryQuery = Static<typeof SloHistoryQuery>;

const StepTimes = Type.Array(Type.Number(), { description: 'end of each step, epoch ms' });
const StepValues = Type.Array(NNum);

/** One burn line: the burn rate over a tier's long window, with the factor that tier alerts at. */
export const SloBurnLine = Type.Object({
  tier: Type.String(),
  window: Type.String(),
  factor: Type.Number(),
  severity: stringEnum(SEVERITIES),
  enabled: Type.Boolean(),
  values: StepValues,
});
export type SloBurnLine = Static<typeof SloBurnLine>;

/** What the SLO page draws, computed by the server over every series the SLO watches. */
export const SloHistory = Type.Object({
  slo_id: Type.String(),
  from: Type.String(),
  to: Type.String(),
  objective: Type.Number(),
  threshold_ms: Type.Number(),
  window: Type.String(),
  window_ms: Type.Number({
    description: 'length of the compliance window the tiers are scaled to',
  }),
  series_ids: Type.Array(Type.String(), { description: 'every series the selector matches' }),
  tiers: Type.Array(SloTier, { description: 'the SLO status tiers, as the alerts evaluate them' }),
  budget_remaining: Type.Number(),
  exhaustion_ms: Type.Union([Type.Number(), Type.Null()], {
    description: 'time until the budget is gone at the 1 h burn rate; null when not burning',
  }),
  burn: Type.Object({ step_ms: Type.Number(), t: StepTimes, lines: Type.Array(SloBurnLine) }),
  budget: Type.Object({ step_ms: Type.Number(), t: StepTimes, values: StepValues }),
});
export type SloHistory = Static<typeof SloHistory>;
