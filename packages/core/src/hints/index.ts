export { attributeLifts, liftValue, type ScalarAttr, type EvidenceSample } from './lifts.ts';
export { detectHints, MIN_CORRELATION, MIN_HINT_SAMPLES, type HintInput } from './hints.ts';
export { quantile, spearman } from './stats.ts';
