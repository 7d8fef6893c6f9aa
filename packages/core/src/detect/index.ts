export * from './types.ts';
export { StepDetector, type DetectorStateJSON } from './detector.ts';
export { decodeState, encodeState } from './codec.ts';
export {
  detectSteps,
  detectStepsIncremental,
  stepRecovery,
  type Recovery,
  type RecoveryOptions,
} from './api.ts';
export { burstVerdict, BURST_BACK_POINTS, BURST_MAX_POINTS, type BurstVerdict } from './burst.ts';
export { detectOptionsFor, MIN_RATIO } from './view-options.ts';
export {
  segmentLines,
  firstDifferenceSd,
  fitSegment,
  lineAt,
  SEGMENT_MIN_SIZE,
  SEGMENT_PENALTY_PER_LOG_N,
  type Segment,
  type SegmentOptions,
} from './segment.ts';
export {
  confirmStep,
  segmentChanges,
  segmentMetric,
  CONFIRM_MIN_POINTS,
  SHIFT_MIN_RATIO,
  type SegmentChange,
  type SegmentVerdictOptions,
  type StepConfirmation,
} from './segment-verdict.ts';
