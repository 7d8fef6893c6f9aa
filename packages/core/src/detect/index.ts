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
