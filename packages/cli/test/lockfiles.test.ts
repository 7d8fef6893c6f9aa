import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  diffLockfiles,
  formatFromName,
  readLockfile,
  LockfileError,
} from '../src/lockfiles/index.ts';
import { parsePackageLock } from '../src/lockfiles/npm.ts';
import { detectCi } from '../src/deploy/ci-env.ts';

const FIX = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fx = (p: string) => path.join(FIX, p);

describe('lockfile diffs on realistic fixtures', () => {
  it('package-lock.json v3: bumps, an added and a removed package; the project, workspaces and unchanged nested copies are ignored', () => {
    const { format, changes } = diffLockfiles(
      fx('npm/before/package-lock.json'),
      fx('npm/after/package-lock.json'),
    );
    expect(format).toBe('npm');
    expect(changes).toEqual([
      { component: 'body-parser', from: '1.20.1', to: '1.20.2' },
      { component: 'express', from: '4.18.2', to: '4.19.2' },
      { component: 'left-pad', from: '1.3.0', to: null },
      { component: 'pg', from: '8.11.3', to: '8.12.0' },
      { component: 'pg-protocol', from: '1.6.0', to: '1.6.1' },
      { component: 'undici', from: null, to: '6.6.2' },
    ]);
  });

  it('Cargo.lock: the hyper 0.12 -> 0.13 bump with its tokio/h2 train; crates in two versions; the workspace crate is not a dependency', () => {
    const { changes } = diffLockfiles(fx('cargo/before/Cargo.lock'), fx('cargo/after/Cargo.lock'));
    expect(changes).toEqual([
      { component: 'bytes', from: null, to: '0.5.3' },
      { component: 'futures', from: '0.1.29', to: null },
      { component: 'futures-core', from: null, to: '0.3.1' },
      { component: 'futures-util', from: null, to: '0.3.1' },
      { component: 'h2', from: '0.1.26', to: '0.2.1' },
      { component: 'http', from: null, to: '0.2.0' },
      { component: 'hyper', from: '0.12.35', to: '0.13.1' },
      { component: 'tokio', from: '0.1.22', to: '0.2.6' },
      { component: 'tokio-io', from: '0.1.12', to: null },
    ]);
  });

  it('go.sum: only built versions count (the /go.mod lines left behind are not)', () => {
    expect(diffLockfiles(fx('go/before/go.sum'), fx('go/after/go.sum')).changes).toEqual([
      { component: 'github.com/google/uuid', from: 'v1.3.0', to: 'v1.6.0' },
      { component: 'golang.org/x/net', from: 'v0.17.0', to: 'v0.23.0' },
      { component: 'golang.org/x/sys', from: 'v0.13.0', to: 'v0.18.0' },
    ]);
  });

  it('poetry.lock and pip-compile requirements.txt (hashes, extras, markers, case-insensitive names)', () => {
    expect(
      diffLockfiles(fx('python/before/poetry.lock'), fx('python/after/poetry.lock')).changes,
    ).toEqual([
      { component: 'requests', from: '2.31.0', to: '2.32.3' },
      { component: 'urllib3', from: '1.26.18', to: '2.2.2' },
    ]);
    expect(
      diffLockfiles(fx('python/before/requirements.txt'), fx('python/after/requirements.txt'))
        .changes,
    ).toEqual([
      { component: 'django', from: '4.2.11', to: '4.2.13' },
      { component: 'gunicorn', from: null, to: '22.0.0' },
      { component: 'requests', from: '2.31.0', to: '2.32.3' },
    ]);
  });

  it('reads lockfileVersion 1 (nested dependencies) too', () => {
    const v1 = JSON.stringify({
      lockfileVersion: 1,
      dependencies: {
        express: { version: '4.17.1', dependencies: { debug: { version: '2.6.9' } } },
        debug: { version: '4.1.1' },
      },
    });
    const got = parsePackageLock(v1, 'package-lock.json');
    expect([...got.entries()].map(([k, v]) => [k, [...v].sort()])).toEqual([
      ['express', ['4.17.1']],
      ['debug', ['2.6.9', '4.1.1']],
    ]);
  });

  it('tells formats from names, including renamed copies of the previous revision', () => {
    expect(formatFromName('/tmp/base/package-lock.json')).toBe('npm');
    expect(formatFromName('old.Cargo.lock')).toBe('cargo');
    expect(formatFromName('prev-go.sum')).toBe('go');
    expect(formatFromName('requirements-prod.txt')).toBe('requirements');
    expect(formatFromName('deps.lock')).toBeNull();
  });
});

describe('lockfiles that do not parse: the error names the file and line', () => {
  const cases: Array<[string, 'npm' | 'cargo' | 'go' | 'requirements' | 'poetry', RegExp]> = [
    [
      'broken/package-lock.json',
      'npm',
      /broken\/package-lock\.json:30:7: invalid JSON: comma expected/,
    ],
    [
      'broken/Cargo.lock',
      'cargo',
      /broken\/Cargo\.lock:17:14: invalid TOML: illegal character in numeric literal/,
    ],
    [
      'broken/go.sum',
      'go',
      /broken\/go\.sum:3: expected "<module> <version> <hash>", got "<<<<<<< HEAD"/,
    ],
    [
      'broken/requirements.txt',
      'requirements',
      /broken\/requirements\.txt:3: cannot read requirement "<<<<<<< HEAD"/,
    ],
    [
      'broken/poetry.lock',
      'poetry',
      /broken\/poetry\.lock:5: \[\[package\]\] #2 needs a string "name" and "version"/,
    ],
  ];
  for (const [file, format, message] of cases) {
    it(`${file}`, () => {
      expect(() => readLockfile(fx(file), format)).toThrow(LockfileError);
      expect(() => readLockfile(fx(file), format)).toThrow(message);
    });
  }

  it('valid JSON that is not a package-lock, an empty file, a missing file', () => {
    expect(() => parsePackageLock('{"name": "x"}', 'package-lock.json')).toThrow(
      /package-lock\.json: not a package-lock\.json/,
    );
    expect(() => parsePackageLock('', 'package-lock.json')).toThrow(
      /package-lock\.json:1:1: invalid JSON/,
    );
    expect(() => readLockfile(fx('nope/Cargo.lock'), 'cargo')).toThrow(
      /nope\/Cargo\.lock: cannot read: ENOENT/,
    );
  });
});

describe('CI environments', () => {
  it('GitHub Actions, GitLab CI, Buildkite and Jenkins give commit, link and a run id', () => {
    expect(
      detectCi({
        GITHUB_ACTIONS: 'true',
        GITHUB_SHA: 'a1',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_REPOSITORY: 'acme/shop',
        GITHUB_RUN_ID: '77',
      }),
    ).toEqual({
      provider: 'github',
      commit: 'a1',
      url: 'https://github.com/acme/shop/actions/runs/77',
      runId: 'github:acme/shop:77',
    });
    expect(
      detectCi({
        GITLAB_CI: 'true',
        CI_COMMIT_SHA: 'b2',
        CI_JOB_URL: 'https://gitlab.example/acme/shop/-/jobs/9',
        CI_PROJECT_ID: '5',
        CI_PIPELINE_ID: '8',
        CI_ENVIRONMENT_NAME: 'prod',
      }),
    ).toEqual({
      provider: 'gitlab',
      commit: 'b2',
      url: 'https://gitlab.example/acme/shop/-/jobs/9',
      runId: 'gitlab:5:8',
      environment: 'prod',
    });
    expect(
      detectCi({
        BUILDKITE: 'true',
        BUILDKITE_COMMIT: 'HEAD',
        BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/shop/builds/3',
        BUILDKITE_BUILD_ID: 'u-1',
      }),
    ).toEqual({
      provider: 'buildkite',
      commit: undefined,
      url: 'https://buildkite.com/acme/shop/builds/3',
      runId: 'buildkite:u-1',
    });
    expect(
      detectCi({
        JENKINS_URL: 'https://ci.example/',
        GIT_COMMIT: 'c3',
        BUILD_URL: 'https://ci.example/job/shop/12/',
        BUILD_TAG: 'jenkins-shop-12',
      }),
    ).toEqual({
      provider: 'jenkins',
      commit: 'c3',
      url: 'https://ci.example/job/shop/12/',
      runId: 'jenkins:jenkins-shop-12',
    });
    expect(detectCi({ PATH: '/usr/bin' })).toBeNull();
  });

  it('any CI env-ci knows: CircleCI and Azure Pipelines too', () => {
    expect(
      detectCi({
        CI: 'true',
        CIRCLECI: 'true',
        CIRCLE_SHA1: 'd4',
        CIRCLE_BUILD_NUM: '41',
        CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/shop/41',
        CIRCLE_PROJECT_USERNAME: 'acme',
        CIRCLE_PROJECT_REPONAME: 'shop',
      }),
    ).toEqual({
      provider: 'circleci',
      commit: 'd4',
      url: 'https://circleci.com/gh/acme/shop/41',
      runId: 'circleci:acme/shop:41',
    });
    expect(
      detectCi({
        BUILD_BUILDURI: 'vstfs:///Build/Build/1',
        BUILD_SOURCEVERSION: 'e5',
        BUILD_BUILDNUMBER: '20261124.1',
        BUILD_REPOSITORY_NAME: 'acme/shop',
      }),
    ).toMatchObject({
      provider: 'azurePipelines',
      commit: 'e5',
      runId: 'azurePipelines::20261124.1',
    });
  });

  it('a link env-ci could only half build is left out, not sent as "undefined/…"', () => {
    expect(detectCi({ GITLAB_CI: 'true', CI_COMMIT_SHA: 'f6', CI_PIPELINE_ID: '8' })).toEqual({
      provider: 'gitlab',
      commit: 'f6',
      url: undefined,
      runId: 'gitlab::8',
    });
  });
});
