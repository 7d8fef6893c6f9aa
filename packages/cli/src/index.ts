export { main } from './main.ts';
export { buildMarkers, UsageError, type DeployFlags, type MarkerBody } from './deploy/markers.ts';
export { detectCi, type CiContext } from './deploy/ci-env.ts';
export { postMarker, RefusedError, UnavailableError } from './deploy/client.ts';
export {
  diffLockfiles,
  diffPackages,
  formatFromName,
  readLockfile,
  LockfileError,
  type DependencyChange,
} from './lockfiles/index.ts';
