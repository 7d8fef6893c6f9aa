export {
  attributeLifts,
  comparedValue,
  selectionLifts,
  liftValue,
  type ScalarAttr,
  type EvidenceSample,
} from './lifts.ts';
export {
  detectHints,
  MIN_CORRELATION,
  MIN_HINT_SAMPLES,
  standingHints,
  type HintInput,
  type StandingInput,
} from './hints.ts';
export { quantile, spearman } from './stats.ts';
