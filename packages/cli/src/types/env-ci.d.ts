/** The part of env-ci's result Onset reads (env-ci ships no types; @types/env-ci is for v3). */
declare module 'env-ci' {
  export interface CiEnvironment {
    isCi: boolean;
    /** e.g. "github", "gitlab", "circleci"; absent outside a known CI. */
    service?: string;
    name?: string;
    commit?: string;
    build?: string;
    buildUrl?: string;
    job?: string;
    jobUrl?: string;
    slug?: string;
  }
  export default function envCi(options?: {
    env?: Record<string, string | undefined>;
    cwd?: string;
  }): CiEnvironment;
}
