import { Type, type Static } from '@sinclair/typebox';
import { OPS, VERDICT_METHODS, VERDICT_OUTCOMES, VERDICT_ROLES, VIEWS } from '../vocab.ts';
import { DurationText, NNum, NStr, stringEnum } from './common.ts';

/** The longest `?wait` the server holds a verdict request (longer is a 400). */
export const VERDICT_MAX_WAIT_MS = 15 * 60_000;
/** Bounds of the judged window (`?window`). */
export const VERDICT_WINDOW_BOUNDS_MS = { min: 60_000, max: 2 * 3_600_000 } as const;

/** GET /api/v1/deploys/{id}/verdict query (api.md "Deploy verdicts"). */
export const VerdictQuery = Type.Object({
  wait: Type.Optional(
    DurationText(
      'hold the request until the verdict is decided or this much time passed (at most 15m); default: answer at once',
    ),
  ),
  window: Type.Optional(
    DurationText(
      'the judged window after the marker (1m to 2h); default the service setting, else 10m',
    ),
  ),
  p50_ratio: Type.Optional(
    Type.Number({
      minimum: 1,
      maximum: 1000,
      description: 'minimum effect on p50 (candidate / baseline) that fails; default 1.1',
    }),
  ),
  p99_ratio: Type.Optional(
    Type.Number({
      minimum: 1,
      maximum: 1000,
      description: 'minimum effect on p99 (candidate / baseline) that fails; default 1.2',
    }),
  ),
  min_count: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000_000,
      description:
        'calls each side needs for a series to be judged; fewer is inconclusive, never pass; default 300',
    }),
  ),
});
export type VerdictQuery = Static<typeof VerdictQuery>;

const Instant = Type.String({ format: 'date-time' });

/** A half-open time window [from, to). */
export const VerdictWindow = Type.Object({ from: Instant, to: Instant });
export type VerdictWindow = Static<typeof VerdictWindow>;

/** One side of a comparison: its calls and quantiles (ms), null without calls. */
export const VerdictSide = Type.Object({
  count: Type.Number(),
  p50: NNum,
  p99: NNum,
});
export type VerdictSide = Static<typeof VerdictSide>;

/** candidate / baseline with a 95 % confidence interval; null when a side has no calls. */
export const VerdictRatio = Type.Object({
  value: NNum,
  low: NNum,
  high: NNum,
});
export type VerdictRatio = Static<typeof VerdictRatio>;

/** One judged series. */
export const VerdictSeries = Type.Object({
  series_id: Type.String(),
  service: Type.String(),
  op: stringEnum(OPS),
  view: stringEnum(VIEWS),
  name: Type.String(),
  peer: NStr,
  role: stringEnum(VERDICT_ROLES, 'why it is judged: service | host | caller'),
  baseline: VerdictSide,
  candidate: VerdictSide,
  p50_ratio: VerdictRatio,
  p99_ratio: VerdictRatio,
  p_value: Type.Union([Type.Number(), Type.Null()], {
    description:
      'one-sided Mann-Whitney U on the histograms: candidate calls slower than baseline calls',
  }),
  prob_slower: Type.Union([Type.Number(), Type.Null()], {
    description:
      'effect size: the chance a candidate call is slower than a baseline call (ties count half); 0.5 is no change',
  }),
  verdict: stringEnum(VERDICT_OUTCOMES),
  reason: Type.String({ description: 'one line: why this row has its verdict' }),
});
export type VerdictSeries = Static<typeof VerdictSeries>;

/** The thresholds a verdict applied (request, else service setting, else default). */
export const VerdictThresholds = Type.Object({
  p50_ratio: Type.Number(),
  p99_ratio: Type.Number(),
  min_count: Type.Number(),
  alpha: Type.Number({ description: 'significance level of the test' }),
  window_ms: Type.Number({ description: 'the judged window after the marker' }),
});
export type VerdictThresholds = Static<typeof VerdictThresholds>;

/** GET /api/v1/deploys/{id}/verdict. */
export const Verdict = Type.Object({
  deploy_id: Type.String(),
  verdict: stringEnum(VERDICT_OUTCOMES),
  reason: Type.String({ description: 'one line: what decided the verdict' }),
  decided_at: Type.Union([Instant, Type.Null()], {
    description: 'when the verdict was decided; null while pending',
  }),
  evaluated_at: Instant,
  method: stringEnum(VERDICT_METHODS, 'canary | before_after'),
  method_reason: Type.String(),
  windows: Type.Object({
    baseline: VerdictWindow,
    candidate: VerdictWindow,
    drift_guard: Type.Union([VerdictWindow, Type.Null()], {
      description:
        'before_after: the window before the baseline, compared with the baseline to catch a change already under way',
    }),
  }),
  canary_hosts: Type.Array(Type.String(), { description: 'canary: the marker’s hosts' }),
  baseline_hosts: Type.Array(Type.String(), { description: 'canary: the service’s other hosts' }),
  thresholds: VerdictThresholds,
  regressions: Type.Array(
    Type.Object({ id: Type.String(), series_id: Type.String(), reason: Type.String() }),
    { description: 'open regressions whose top suspect is this deploy (each makes it fail)' },
  ),
  series_total: Type.Number({ description: 'series judged; `series` lists failing ones first' }),
  series: Type.Array(VerdictSeries),
});
export type Verdict = Static<typeof Verdict>;
