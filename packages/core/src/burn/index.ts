// Curated exports: generic names (MINUTE_MS, floorHour...) stay inside the module
// so they cannot collide with other core modules in packages/core/src/index.ts.
export {
  BURN_WINDOWS,
  BURN_WINDOW_NAMES,
  BURN_TIERS,
  TIER_NAMES,
  DEFAULT_GUARD,
  errorRatio,
  burnRate,
  sli,
  budgetRemaining,
  timeToExhaustion,
  budgetConsumed,
  tierFactor,
  tierApplies,
  detectionTime,
  evaluateTiers,
  firingBySeverity,
  type BurnWindow,
  type TierName,
  type BurnTier,
  type Counts,
  type LowTrafficGuard,
  type TierResult,
} from './rates.ts';
export {
  parseSloWindow,
  calendarPeriod,
  zonedTimeToUtc,
  isValidTimeZone,
  sloWindowSpan,
  windowEnd,
  counterPieces,
  MIN_WINDOW_MS,
  MAX_WINDOW_MS,
  type SloWindow,
  type CalendarUnit,
  type CounterPiece,
} from './windows.ts';
export {
  estimateGoodFromHistogram,
  niceCeil,
  suggestThreshold,
  SUGGESTION_HEADROOM,
  type ThresholdSuggestion,
} from './suggest.ts';
export { regressionSeverity, REGRESSION_PAGE_RATIO } from './severity.ts';
export {
  countsFromHistogram,
  denseCounts,
  rollingBurn,
  budgetHistory,
  historyStepMs,
  HISTORY_STEPS_MS,
  budgetExhaustionMs,
  type StepCounts,
} from './history.ts';
export { sloAlertQuietMs, sloAlertResolves } from './hysteresis.ts';
