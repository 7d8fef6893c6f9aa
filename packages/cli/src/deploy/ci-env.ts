/** What a CI environment tells us about the run doing the deploy. */
export interface CiContext {
  provider: 'github' | 'gitlab' | 'buildkite' | 'jenkins';
  commit?: string;
  /** Link to the run, for the marker's `url`. */
  url?: string;
  /** Stable across retries of the same run: the basis of the default external_id. */
  runId?: string;
  environment?: string;
}

type Env = Record<string, string | undefined>;

const val = (v: string | undefined) => (v && v.trim() !== '' ? v.trim() : undefined);

/**
 * GitHub Actions, GitLab CI, Buildkite and Jenkins, from their documented
 * environment variables. Missing pieces stay undefined; flags win anyway.
 */
export function detectCi(env: Env): CiContext | null {
  if (env.GITHUB_ACTIONS === 'true') {
    const server = val(env.GITHUB_SERVER_URL) ?? 'https://github.com';
    const repo = val(env.GITHUB_REPOSITORY);
    const run = val(env.GITHUB_RUN_ID);
    return {
      provider: 'github',
      commit: val(env.GITHUB_SHA),
      url: repo && run ? `${server}/${repo}/actions/runs/${run}` : undefined,
      runId: repo && run ? `github:${repo}:${run}` : undefined,
    };
  }
  if (env.GITLAB_CI === 'true') {
    const pipeline = val(env.CI_PIPELINE_ID);
    return {
      provider: 'gitlab',
      commit: val(env.CI_COMMIT_SHA),
      url: val(env.CI_JOB_URL) ?? val(env.CI_PIPELINE_URL),
      runId: pipeline ? `gitlab:${val(env.CI_PROJECT_ID) ?? ''}:${pipeline}` : undefined,
      environment: val(env.CI_ENVIRONMENT_NAME),
    };
  }
  if (env.BUILDKITE === 'true') {
    const commit = val(env.BUILDKITE_COMMIT);
    const build = val(env.BUILDKITE_BUILD_ID);
    return {
      provider: 'buildkite',
      // Buildkite reports "HEAD" until the checkout resolves it: not a commit.
      commit: commit && commit !== 'HEAD' ? commit : undefined,
      url: val(env.BUILDKITE_BUILD_URL),
      runId: build ? `buildkite:${build}` : undefined,
    };
  }
  if (val(env.JENKINS_URL) || val(env.JENKINS_HOME)) {
    const tag = val(env.BUILD_TAG);
    return {
      provider: 'jenkins',
      commit: val(env.GIT_COMMIT),
      url: val(env.BUILD_URL),
      runId: tag ? `jenkins:${tag}` : undefined,
    };
  }
  return null;
}
