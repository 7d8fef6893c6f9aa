/**
 * Builds the polyglot harness's three services (README.md beside this file)
 * from their sources and the registries, cached under
 * node_modules/.cache/onset-polyglot keyed by a hash of the sources, so only
 * the first run pays: the Python venv (PyPI, pinned web/requirements.txt),
 * the Go binary (Go module proxy, api/go.sum) and the Java classes plus the
 * OpenTelemetry Java agent (Maven Central). Nothing downloaded is committed.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const POLYGLOT = path.dirname(fileURLToPath(import.meta.url));
const CACHE = path.resolve(POLYGLOT, '../../node_modules/.cache/onset-polyglot');

/** The OpenTelemetry Java agent release the harness runs (Maven Central). */
export const JAVA_AGENT_VERSION = '2.31.1';
const JAVA_AGENT = `io.opentelemetry.javaagent:opentelemetry-javaagent:${JAVA_AGENT_VERSION}`;

/** Where each tool is looked for: PATH, then the Go distribution's usual home. */
function which(tool: string, extra: string[] = []): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...extra]) {
    if (!dir) continue;
    const p = path.join(dir, tool);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

export interface Toolchains {
  python3: string;
  go: string;
  java: string;
  javac: string;
  mvn: string;
}

/** The toolchains, or the names of those missing. */
export function findToolchains(): Toolchains | { missing: string[] } {
  const found = {
    python3: which('python3'),
    go: which('go', ['/usr/local/go/bin']),
    java: which('java'),
    javac: which('javac'),
    mvn: which('mvn'),
  };
  const missing = Object.entries(found)
    .filter(([, p]) => !p)
    .map(([k]) => k);
  return missing.length ? { missing } : (found as Toolchains);
}

export interface Built {
  /** The venv's `opentelemetry-instrument`, and the Flask app it runs. */
  instrument: string;
  python: string;
  webApp: string;
  /** The Go api binary. */
  api: string;
  /** The Java store's class directory and the agent jar. */
  storeClasses: string;
  javaAgent: string;
}

function hashOf(files: string[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(f).update(readFileSync(path.join(POLYGLOT, f)));
  return h.digest('hex').slice(0, 12);
}

async function step(
  file: string,
  args: string[],
  what: string,
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  try {
    await run(file, args, { maxBuffer: 64 * 1024 * 1024, timeout: 600_000, ...opts });
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message: string };
    throw new Error(`polyglot build: ${what} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

/** Run `make` into a fresh `dir` unless `dir/.complete` exists (an interrupted build is redone). */
async function cached(dir: string, make: () => Promise<void>): Promise<void> {
  if (existsSync(path.join(dir, '.complete'))) return;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await make();
  await writeFile(path.join(dir, '.complete'), new Date().toISOString());
}

export async function buildPolyglot(tools: Toolchains): Promise<Built> {
  const webDir = path.join(CACHE, `web-${hashOf(['web/requirements.txt'])}`);
  const apiDir = path.join(CACHE, `api-${hashOf(['api/main.go', 'api/go.mod', 'api/go.sum'])}`);
  const storeDir = path.join(CACHE, `store-${hashOf(['store/Store.java'])}-${JAVA_AGENT_VERSION}`);

  const web = cached(webDir, async () => {
    const venv = path.join(webDir, 'venv');
    await step(
      tools.python3,
      ['-m', 'venv', venv],
      'python3 -m venv (on Debian: apt-get install python3-venv)',
    );
    await step(
      path.join(venv, 'bin', 'pip'),
      [
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '-r',
        path.join(POLYGLOT, 'web/requirements.txt'),
      ],
      'pip install from PyPI',
    );
  });
  const api = cached(apiDir, async () => {
    await step(
      tools.go,
      ['build', '-o', path.join(apiDir, 'api'), '.'],
      'go build (Go module proxy)',
      {
        cwd: path.join(POLYGLOT, 'api'),
        // The toolchain installed here, never one fetched by the go directive.
        env: {
          ...process.env,
          GOTOOLCHAIN: 'local',
          GOFLAGS: '-mod=readonly',
          HOME: process.env.HOME ?? os.homedir(),
        },
      },
    );
  });
  const store = cached(storeDir, async () => {
    await step(
      tools.javac,
      ['-d', path.join(storeDir, 'classes'), path.join(POLYGLOT, 'store/Store.java')],
      'javac',
    );
    await step(
      tools.mvn,
      ['-q', '-B', 'dependency:copy', `-Dartifact=${JAVA_AGENT}`, `-DoutputDirectory=${storeDir}`],
      `mvn dependency:copy ${JAVA_AGENT} (Maven Central)`,
    );
  });
  await Promise.all([web, api, store]);
  const jar = readdirSync(storeDir).find(
    (f) => f.startsWith('opentelemetry-javaagent') && f.endsWith('.jar'),
  );
  if (!jar) throw new Error(`polyglot build: no agent jar in ${storeDir}`);
  return {
    instrument: path.join(webDir, 'venv', 'bin', 'opentelemetry-instrument'),
    python: path.join(webDir, 'venv', 'bin', 'python'),
    webApp: path.join(POLYGLOT, 'web', 'app.py'),
    api: path.join(apiDir, 'api'),
    storeClasses: path.join(storeDir, 'classes'),
    javaAgent: path.join(storeDir, jar),
  };
}
