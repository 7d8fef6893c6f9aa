/**
 * docker-compose.yml, the Dockerfile and the configs they mount, checked
 * without a Docker engine: what can be parsed is parsed, cross-references
 * are followed, and the server is booted exactly as the image runs it (its
 * CMD, ENV and the compose environment) against a real PostgreSQL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { parseTokens } from '../src/config.ts';
import { freePort } from '../src/db/embedded.ts';
import { loadConfig as loadAgentConfig } from '../../agent/src/config/load.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');

// ---------------------------------------------------------------------------
// Compose variable interpolation (${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:+replacement},
// ${VAR+replacement}, ${VAR:?error}, ${VAR?error}, $VAR, $$).

type Env = Record<string, string | undefined>;

function interpolateString(s: string, env: Env): string {
  return s.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\+|\+|:\?|\?)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (m, name?: string, op?: string, arg?: string, bare?: string) => {
      if (m === '$$') return '$';
      const v = env[(name ?? bare)!];
      switch (op) {
        case undefined:
          return v ?? '';
        case ':-':
          return v ? v : arg!;
        case '-':
          return v ?? arg!;
        case ':+':
          return v ? arg! : '';
        case '+':
          return v === undefined ? '' : arg!;
        case ':?':
          if (!v) throw new Error(`required variable ${name}: ${arg}`);
          return v;
        default:
          if (v === undefined) throw new Error(`required variable ${name}: ${arg}`);
          return v;
      }
    },
  );
}

function interpolate<T>(value: T, env: Env): T {
  if (typeof value === 'string') return interpolateString(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)])) as T;
  return value;
}

// ---------------------------------------------------------------------------

interface Service {
  image?: string;
  build?: { context: string; target?: string };
  profiles?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: {
    test: string[];
    interval?: string;
    timeout?: string;
    retries?: number;
    start_period?: string;
  };
  privileged?: boolean;
  pid?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const composeRaw = YAML.parse(read('docker-compose.yml')) as Compose;

/** env.example: uncommented KEY= lines are required, commented ones optional. */
const envExample = read('deploy/env.example');
const requiredVars = [...envExample.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
const exampleEnv: Env = Object.fromEntries(
  requiredVars.map((k) => [k, randomBytes(12).toString('hex')]),
);
const compose = interpolate(composeRaw, exampleEnv);

// ---------------------------------------------------------------------------
// The Dockerfile, read stage by stage.

interface Stage {
  name: string;
  from: string;
  lines: string[];
}
const ARG_DEFAULTS: Record<string, string> = {};
function dockerfileStages(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const arg = /^ARG\s+(\w+)=(\S+)/.exec(line);
    if (arg && !stages.length) ARG_DEFAULTS[arg[1]!] = arg[2]!;
    const from = /^FROM\s+(?:--\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      stages.push({
        name: from[2] ?? `#${stages.length}`,
        from: from[1]!.replace(/\$\{(\w+)\}/g, (_, a: string) => ARG_DEFAULTS[a] ?? ''),
        lines: [],
      });
      continue;
    }
    stages.at(-1)?.lines.push(line);
  }
  return stages;
}
const stages = dockerfileStages(read('Dockerfile'));
const stage = (name: string) => stages.find((s) => s.name === name)!;
const instr = (s: Stage, op: string) =>
  s.lines
    .filter((l) => l.toUpperCase().startsWith(`${op} `))
    .map((l) => l.slice(op.length + 1).trim());

/** In-image path -> repo path, from the COPY lines of a stage and the stages it builds on. */
function copiedFrom(target: string, imagePath: string): string | undefined {
  for (let s: Stage | undefined = stage(target); s; s = stages.find((x) => x.name === s!.from)) {
    for (const c of instr(s, 'COPY')) {
      if (c.includes('--from=')) continue;
      const [src, dest] = c.replace(/--\S+\s+/g, '').split(/\s+/);
      if (dest === imagePath) return src;
    }
  }
  return undefined;
}

const PINNED = /^[\w./-]+:\d+(\.\d+)+(-[\w.-]+)?$/;

// ---------------------------------------------------------------------------

describe('docker-compose.yml', () => {
  it('parses, and every service has an image or a build and a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'agent',
      'agent-synthetic',
      'citus-coordinator',
      'citus-worker-1',
      'citus-worker-2',
      'grafana',
      'onset',
      'onset-citus',
      'otel-collector',
      'postgres',
    ]);
    for (const [name, svc] of Object.entries(compose.services)) {
      expect(svc.image || svc.build, `${name}: image or build`).toBeTruthy();
      if (svc.build) {
        expect(svc.build.target, `${name}: build target`).toBeTruthy();
        expect(
          stages.map((s) => s.name),
          `${name}: target ${svc.build.target} is a Dockerfile stage`,
        ).toContain(svc.build.target);
        expect(svc.image, `${name}: built images get a local name`).toMatch(/^[\w.-]+:[\w.-]+$/);
      } else {
        expect(svc.image, `${name}: pinned image`).toMatch(PINNED);
      }
      const hc = svc.healthcheck;
      expect(hc?.test?.length, `${name}: health check`).toBeGreaterThan(1);
      expect(['CMD', 'CMD-SHELL']).toContain(hc!.test[0]);
      expect(
        hc!.interval && hc!.timeout && hc!.retries,
        `${name}: health check timing`,
      ).toBeTruthy();
    }
  });

  it('refuses to start without the secrets of deploy/env.example, and needs nothing else', () => {
    expect(() => interpolate(composeRaw, {})).toThrow(/required variable \w+: set \w+ in \.env/);
    for (const v of requiredVars) {
      const env = { ...exampleEnv, [v]: undefined };
      expect(() => interpolate(composeRaw, env), `${v} is required`).toThrow(new RegExp(v));
    }
  });

  it('keeps PostgreSQL on a named volume, and starts Onset only once it is healthy', () => {
    const pgSvc = compose.services.postgres!;
    const dataVolume = pgSvc.volumes!.find((v) => v.endsWith(':/var/lib/postgresql/data'))!;
    expect(dataVolume).toBeTruthy();
    expect(Object.keys(compose.volumes ?? {})).toContain(dataVolume.split(':')[0]);
    expect(compose.services.onset!.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
    });
    expect(compose.services['otel-collector']!.depends_on?.onset?.condition).toBe(
      'service_healthy',
    );
    expect(compose.services.grafana!.depends_on?.onset?.condition).toBe('service_healthy');
    const db = new URL(compose.services.onset!.environment!.DATABASE_URL!);
    expect(db.hostname).toBe('postgres');
    expect(db.username).toBe(pgSvc.environment!.POSTGRES_USER);
    expect(decodeURIComponent(db.password)).toBe(pgSvc.environment!.POSTGRES_PASSWORD);
    expect(db.pathname).toBe(`/${pgSvc.environment!.POSTGRES_DB}`);
  });

  it('mounts only files that exist in the repository', () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const v of svc.volumes ?? []) {
        const host = v.split(':')[0]!;
        if (host.startsWith('./'))
          expect(existsSync(path.join(ROOT, host)), `${name}: ${host}`).toBe(true);
      }
    }
    const init = path.join(ROOT, 'deploy/postgres/initdb/10-onset-grafana-role.sh');
    expect(statSync(init).mode & 0o111, 'the init script is executable').toBeTruthy();
  });

  it('runs a second Onset on a Citus coordinator and two workers as the citus profile', () => {
    const names = ['citus-coordinator', 'citus-worker-1', 'citus-worker-2', 'onset-citus'];
    for (const n of names) expect(compose.services[n]!.profiles, n).toEqual(['citus']);
    // Only the citus profile's services reach the cluster; the default stack is unchanged.
    for (const [n, svc] of Object.entries(compose.services))
      if (!names.includes(n)) expect(svc.profiles ?? [], n).not.toContain('citus');
    const coord = compose.services['citus-coordinator']!;
    expect(coord.depends_on).toEqual({
      'citus-worker-1': { condition: 'service_healthy' },
      'citus-worker-2': { condition: 'service_healthy' },
    });
    for (const n of names.slice(0, 3)) {
      const svc = compose.services[n]!;
      expect(svc.image, n).toMatch(/^citusdata\/citus:/);
      const data = svc.volumes!.find((v) => v.endsWith(':/var/lib/postgresql/data'))!;
      expect(Object.keys(compose.volumes ?? {}), n).toContain(data.split(':')[0]);
      expect(svc.environment, n).toEqual(coord.environment);
    }
    // The coordinator registers itself and both workers by their service names, once, at init.
    const init = coord.volumes!.find((v) => v.includes(':/docker-entrypoint-initdb.d/'))!;
    const script = read(init.split(':')[0]!.slice(2));
    expect(script).toContain(`citus_set_coordinator_host('citus-coordinator', 5432)`);
    for (const w of ['citus-worker-1', 'citus-worker-2'])
      expect(script).toContain(`citus_add_node('${w}', 5432)`);
    expect(statSync(path.join(ROOT, init.split(':')[0]!)).mode & 0o111).toBeTruthy();
    const onset = compose.services['onset-citus']!;
    expect(onset.depends_on).toEqual({ 'citus-coordinator': { condition: 'service_healthy' } });
    expect(onset.image).toBe(compose.services.onset!.image);
    expect(onset.environment!.ONSET_DISTRIBUTED).toBe('citus');
    const db = new URL(onset.environment!.DATABASE_URL!);
    expect(db.hostname).toBe('citus-coordinator');
    expect(db.username).toBe(coord.environment!.POSTGRES_USER);
    expect(decodeURIComponent(db.password)).toBe(coord.environment!.POSTGRES_PASSWORD);
    expect(db.pathname).toBe(`/${coord.environment!.POSTGRES_DB}`);
    expect(onset.environment!.ONSET_TOKENS).toBe(compose.services.onset!.environment!.ONSET_TOKENS);
    const hostPorts = Object.values(compose.services).flatMap((s) =>
      (s.ports ?? []).map((p) => p.split(':')[0]),
    );
    expect(new Set(hostPorts).size, 'no host port taken twice').toBe(hostPorts.length);
  });

  it('runs the agent privileged with the host pid namespace, or unprivileged as the synthetic profile', () => {
    const agent = compose.services.agent!;
    expect(agent.profiles).toEqual(['agent']);
    expect(agent.privileged).toBe(true);
    expect(agent.pid).toBe('host');
    const synthetic = compose.services['agent-synthetic']!;
    expect(synthetic.profiles).toEqual(['synthetic']);
    expect(synthetic.privileged).toBeFalsy();
    expect(synthetic.pid).toBeUndefined();
    // Both send to the Collector, with config files the agent itself loads as compose sets it up.
    for (const [name, svc] of [
      ['agent', agent],
      ['agent-synthetic', synthetic],
    ] as const) {
      const mount = svc.volumes!.find(
        (v) => v.split(':')[1] === svc.environment!.ONSET_AGENT_CONFIG,
      )!;
      const cfg = loadAgentConfig(
        {},
        { ...svc.environment, ONSET_AGENT_CONFIG: path.join(ROOT, mount.split(':')[0]!) },
      );
      expect(new URL(cfg.tracesUrl).hostname, name).toBe('otel-collector');
      expect(cfg.sources.probes, name).toBe(true);
      if (name === 'agent') expect(cfg.sources).toMatchObject({ bpftrace: 'auto', strace: 'auto' });
      else {
        expect(cfg.sources).toMatchObject({ bpftrace: 'off', strace: 'off' });
        expect(cfg.probes.mount.enabled, 'mounting needs privileges').toBe(false);
      }
    }
  });

  /** `${env:NAME:-default}` as the Collector expands it. */
  const collectorEnvDefault = (s: string, env: Record<string, string>) =>
    s.replace(
      /\$\{env:(\w+)(?::-([^}]*))?\}/g,
      (_: string, k: string, d?: string) => env[k] ?? d ?? `<unset ${k}>`,
    );

  it('wires the Collector: OTLP on 4317/4318 in, Onset with the ingest token out', () => {
    const svc = compose.services['otel-collector']!;
    expect(svc.ports).toEqual(expect.arrayContaining(['4317:4317', '4318:4318']));
    const mounted = svc
      .volumes!.find((v) => v.endsWith(':/etc/otelcol-contrib/config.yaml:ro'))!
      .split(':')[0]!;
    for (const file of [mounted, 'deploy/otel-collector/loadbalancing.yaml']) {
      const cfg = YAML.parse(read(file));
      expect(cfg.receivers.otlp.protocols.grpc.endpoint, file).toBe('0.0.0.0:4317');
      expect(cfg.receivers.otlp.protocols.http.endpoint, file).toBe('0.0.0.0:4318');
      for (const [pname, p] of Object.entries(
        cfg.service.pipelines as Record<string, Record<string, string[]>>,
      )) {
        for (const kind of ['receivers', 'processors', 'exporters'])
          for (const id of p[kind] ?? [])
            expect(cfg[kind]?.[id], `${file}: pipeline ${pname} uses ${kind}.${id}`).toBeTruthy();
      }
      for (const ext of cfg.service.extensions)
        expect(cfg.extensions[ext], `${file}: extension ${ext}`).toBeTruthy();
      expect(cfg.extensions.health_check.endpoint).toBe('0.0.0.0:13133');
    }
    const cfg = YAML.parse(read(mounted));
    // Current Collector releases name the exporter otlp_http (otlphttp is deprecated).
    expect(cfg.service.pipelines.traces.exporters).toEqual(['otlp_http/onset']);
    const exporter = cfg.exporters['otlp_http/onset'];
    // The sending queue is on disk, in a directory compose keeps on a named volume.
    const storage = exporter.sending_queue.storage;
    expect(storage).toMatch(/^file_storage(\/|$)/);
    expect(cfg.service.extensions).toContain(storage);
    const queueDir = collectorEnvDefault(cfg.extensions[storage].directory, svc.environment!);
    const queueVolume = svc.volumes!.find((v) => v.split(':')[1] === queueDir)?.split(':')[0];
    expect(queueVolume, `a volume at ${queueDir}`).toBeTruthy();
    expect(Object.keys(compose.volumes ?? {})).toContain(queueVolume);
    // The load-balancing exporter's DNS resolver takes the port as a string.
    expect(
      typeof YAML.parse(read('deploy/otel-collector/loadbalancing.yaml')).exporters[
        'load_balancing/onset'
      ].resolver.dns.port,
    ).toBe('string');
    const collectorEnv = (s: string) =>
      s.replace(
        /\$\{env:(\w+)\}/g,
        (_: string, k: string) => svc.environment![k] ?? `<unset ${k}>`,
      );
    const onsetEnv = compose.services.onset!.environment!;
    expect(collectorEnv(exporter.endpoint)).toBe(`http://onset:${onsetEnv.ONSET_OTLP_PORT}`);
    const token = /^Bearer (\S+)$/.exec(collectorEnv(exporter.headers.Authorization))![1]!;
    expect(
      parseTokens(onsetEnv.ONSET_TOKENS).get(token)?.has('ingest'),
      'the Collector token has the ingest scope',
    ).toBe(true);
    expect(svc.healthcheck!.test.join(' ')).toContain(':13133/');
    expect(copiedFrom('collector', '/etc/otelcol-contrib/config.yaml')).toBe(
      'deploy/otel-collector/config.yaml',
    );
  });

  it('provisions Grafana: datasource variables set, files mounted where the provider reads them', () => {
    const svc = compose.services.grafana!;
    const mount = (dest: string) =>
      svc.volumes!.find((v) => v.split(':')[1] === dest)?.split(':')[0];
    expect(mount('/etc/grafana/provisioning')).toBe('./deploy/grafana/provisioning');
    const provider = YAML.parse(read('deploy/grafana/provisioning/dashboards/onset.yaml'))
      .providers[0];
    expect(mount(provider.options.path)).toBe('./deploy/grafana/dashboards');
    expect(
      svc.environment!.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH!.startsWith(provider.options.path),
    ).toBe(true);
    const dsText = read('deploy/grafana/provisioning/datasources/onset.yaml');
    for (const [, v] of dsText.matchAll(/\$\{(\w+)\}/g))
      expect(svc.environment![v!], `grafana sets ${v}`).toBeTruthy();
    expect(svc.environment!.ONSET_GRAFANA_DB_HOST).toBe('postgres:5432');
    expect(svc.environment!.ONSET_GRAFANA_DB_NAME).toBe(
      compose.services.postgres!.environment!.POSTGRES_DB,
    );
    // The role Grafana logs in as is the one the init script creates and the migrations grant.
    const role = svc.environment!.ONSET_GRAFANA_DB_USER!;
    expect(read('deploy/postgres/initdb/10-onset-grafana-role.sh')).toContain(
      `CREATE ROLE ${role} LOGIN`,
    );
    expect(read('migrations/0005_grafana_views.sql')).toContain(`TO ${role};`);
  });
});

describe('Dockerfile', () => {
  it('is multi-stage with pinned base images', () => {
    expect(stages.length).toBeGreaterThanOrEqual(4);
    const names = new Set(stages.map((s) => s.name));
    for (const s of stages)
      if (!names.has(s.from)) expect(s.from, `stage ${s.name}`).toMatch(PINNED);
  });

  it('runs the server as a non-root user, the agent as root (bpftrace), with their health checks inside the image', () => {
    const server = stage('server');
    const user = instr(server, 'USER').at(-1);
    expect(user).toBeTruthy();
    expect(['root', '0']).not.toContain(user);
    expect(instr(stage('agent'), 'USER')).toEqual([]);
    for (const [svc, target] of [
      ['onset', 'server'],
      ['agent', 'agent'],
      ['agent-synthetic', 'agent'],
      ['otel-collector', 'collector'],
    ] as const) {
      const test = compose.services[svc]!.healthcheck!.test;
      const script = test.find((a) => a.startsWith('/usr/local/'))!;
      const src = copiedFrom(target, script);
      if (script.endsWith('.mjs'))
        expect(
          src && existsSync(path.join(ROOT, src)),
          `${svc}: ${script} is copied into the image`,
        ).toBe(true);
      else
        expect(
          instr(stage('collector'), 'COPY').some((c) => c.includes(script)),
          `${svc}: ${script}`,
        ).toBe(true);
    }
  });

  it('copies only paths that exist and that .dockerignore lets through', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('!'));
    for (const s of stages) {
      for (const c of instr(s, 'COPY')) {
        if (c.includes('--from=')) continue;
        const src = c.replace(/--\S+\s+/g, '').split(/\s+/)[0]!;
        if (src === '.') continue;
        expect(existsSync(path.join(ROOT, src)), `${s.name}: COPY ${src}`).toBe(true);
        for (const pat of ignored)
          expect(
            src === pat || src.startsWith(`${pat}/`),
            `${s.name}: ${src} is ignored by ${pat}`,
          ).toBe(false);
      }
    }
  });
});

// ---------------------------------------------------------------------------
// Boot the server as the image does: its CMD and ENV, the compose environment.

let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
});

function healthcheck(env: NodeJS.ProcessEnv): number {
  const test = compose.services.onset!.healthcheck!.test;
  const args = test
    .slice(1)
    .map((a) => (a.startsWith('/usr/local/') ? path.join(ROOT, copiedFrom('server', a)!) : a));
  return spawnSync(args[0]!, args.slice(1), { env, cwd: ROOT, timeout: 10_000 }).status ?? -1;
}

describe('the server image command with the compose environment', () => {
  it('migrates at start, serves with the tokens from the environment, and passes its health check', async () => {
    const server = stage('server');
    const cmd = JSON.parse(instr(server, 'CMD').at(-1)!) as string[];
    const imageEnv: Record<string, string> = {};
    for (const e of instr(server, 'ENV'))
      for (const [, k, v] of e.matchAll(/(\w+)=(\S+)/g)) imageEnv[k!] = v!;
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...imageEnv,
      ...compose.services.onset!.environment,
      DATABASE_URL: await createTestDatabase('onset_compose'),
      ONSET_PORT: String(port),
      ONSET_OTLP_PORT: String(await freePort()),
      ONSET_LOG_LEVEL: 'warn',
    };
    expect(healthcheck(env), 'unhealthy before the server runs').toBe(1);

    child = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 45_000;
    for (;;) {
      const ok = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`server did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(healthcheck(env), 'healthy').toBe(0);

    // Tokens come from ONSET_TOKENS as compose builds it from .env.
    expect((await fetch(`${base}/api/v1/series`)).status).toBe(401);
    const read = await fetch(`${base}/api/v1/series`, {
      headers: { authorization: `Bearer ${exampleEnv.ONSET_DEPLOY_TOKEN}` },
    });
    expect(read.status).toBe(200);
    const ingest = await fetch(`http://127.0.0.1:${env.ONSET_OTLP_PORT}/v1/traces`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${exampleEnv.ONSET_INGEST_TOKEN}`,
      },
      body: JSON.stringify({ resourceSpans: [] }),
    });
    expect(ingest.status).toBe(200);
    // The migrations ran: Grafana's views are there.
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    const pg = await import('pg');
    const db = new pg.default.Client(env.DATABASE_URL);
    await db.connect();
    const views = await db.query(
      `SELECT count(*)::int AS n FROM pg_views WHERE viewname LIKE 'grafana\\_%'`,
    );
    await db.end();
    expect(views.rows[0].n).toBeGreaterThanOrEqual(5);

    // docker stop sends SIGTERM: the server shuts down cleanly.
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(healthcheck(env), 'unhealthy once stopped').toBe(1);
  }, 60_000);
});
