/**
 * The incidents of product.md as test data, described once (facts.ts) and
 * sent two ways: the official OTel SDK's protobuf exporter (sdk-replay.ts,
 * all five incidents) and OTLP JSON (otlp-json.ts, incidents 4 and 5).
 */
export { incidentTimes, LIVE_WINDOW, REPLAY_WINDOW, type IncidentTimes } from './times.ts';
export {
  REPLAY_MEMBERS,
  REPLAY_REGRESSIONS,
  replayIncidents,
  sdkSink,
  Traffic,
  type MarkerIds,
} from './sdk-replay.ts';
export { Batch, post, sendIncidents, XSS_DESCRIPTION, type SendOptions } from './otlp-json.ts';
export { EDGE, lookupCalls, type EdgePair } from './facts.ts';
export { paymentsResource, ROLLOUT, sendVersionRollout } from './version-rollout.ts';
