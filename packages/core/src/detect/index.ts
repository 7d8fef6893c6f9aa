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
