export {
  LOOKBACK_MS,
  markerTouchesSeries,
  markerWindow,
  rankSuspects,
  timeFit,
  type AttributionInput,
  type Marker,
  type MarkerChange,
  type Coverage,
  type MarkerHostChange,
  type Suspect,
} from './suspects.ts';
export { incidentSuspects } from './incident-suspects.ts';
export { findCohort, type Cohort, type CohortOptions, type CohortRow } from './cohort.ts';
