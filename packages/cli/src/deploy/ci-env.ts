import envCi from 'env-ci';

/** What a CI environment tells us about the run doing the deploy. */
export interface CiContext {
  /** env-ci's service name: github, gitlab, buildkite, jenkins, circleci, azure-pipelines, … */
  provider: string;
  commit?: string;
  /** Link to the run, for the marker's `url`. */
  url?: string;
  /** Stable across retries of the same run: the basis of the default external_id. */
  runId?: string;
  environment?: string;
}

type Env = Record<string, string | undefined>;

const val = (v: string | undefined) => (v && v.trim() !== '' ? v.trim() : undefined);
/** env-ci builds some links from several variables; one missing leaves "undefined" in it. */
const link = (v: string | undefined) =>
  val(v) && !/\bundefined\b/.test(v!) ? v!.trim() : undefined;

/**
 * Run ids Onset already used for these CIs (kept so a marker posted by an
 * older CLI and a retry by this one share their external_id): each is unique
 * across the CI's projects, which `service:slug:build` is not everywhere
 * (Jenkins has no slug, Buildkite's build number is per pipeline).
 */
const KNOWN_RUN_IDS: Record<string, (env: Env) => string | undefined> = {
  gitlab: (env) =>
    val(env.CI_PIPELINE_ID) && `gitlab:${val(env.CI_PROJECT_ID) ?? ''}:${val(env.CI_PIPELINE_ID)}`,
  buildkite: (env) => val(env.BUILDKITE_BUILD_ID) && `buildkite:${val(env.BUILDKITE_BUILD_ID)}`,
  jenkins: (env) => val(env.BUILD_TAG) && `jenkins:${val(env.BUILD_TAG)}`,
};

/**
 * The CI running this command, detected by env-ci (the 30-odd services it
 * knows, from their documented variables): the commit, a link to the run and
 * a run id. Missing pieces stay undefined; flags win anyway. Null outside CI.
 */
export function detectCi(env: Env, cwd = process.cwd()): CiContext | null {
  const ci = envCi({ env, cwd });
  if (!ci.isCi || !ci.service) return null;
  const commit = val(ci.commit);
  const build = val(ci.build);
  return {
    provider: ci.service,
    // Buildkite reports "HEAD" until the checkout resolves it: not a commit.
    commit: commit && commit !== 'HEAD' ? commit : undefined,
    // GitLab names its job's link itself (env-ci rebuilds it from CI_PROJECT_URL).
    url:
      (ci.service === 'gitlab' ? (val(env.CI_JOB_URL) ?? val(env.CI_PIPELINE_URL)) : undefined) ??
      link(ci.jobUrl) ??
      link(ci.buildUrl),
    runId:
      ci.service in KNOWN_RUN_IDS
        ? KNOWN_RUN_IDS[ci.service]!(env) || undefined
        : build
          ? `${ci.service}:${link(ci.slug) ?? ''}:${build}`
          : undefined,
    ...(ci.service === 'gitlab' && val(env.CI_ENVIRONMENT_NAME)
      ? { environment: val(env.CI_ENVIRONMENT_NAME) }
      : {}),
  };
}
