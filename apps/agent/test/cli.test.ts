/**
 * The command a user types: `npx onset-agent --help`, `onset-agent doctor`,
 * bad input, and how flags, environment and config file combine.
 */
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { ConfigError, loadConfig } from '../src/config/load.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'onset-agent-cli-'));

/** Run the installed bin the way a user does; `viaNpx` goes through the workspace link (slower: npm starts first). */
async function agentCli(
  args: string[],
  opts: { viaNpx?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, pre] = opts.viaNpx
    ? ['npx', ['--no-install', 'onset-agent']]
    : [process.execPath, [path.join(ROOT, 'node_modules/.bin/onset-agent')]];
  try {
    const { stdout, stderr } = await run(cmd, [...pre, ...args], { cwd: ROOT, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

// Each case is its own process: run them side by side.
describe.concurrent('onset-agent command', () => {
  it('npx onset-agent --help, from the repo root, explains the sources, the environment and the subcommands', async () => {
    const { code, stdout } = await agentCli(['--help'], { viaNpx: true });
    expect(code).toBe(0);
    for (const text of [
      'doctor',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_SERVICE_NAME',
      'OTEL_RESOURCE_ATTRIBUTES',
      '--comm',
      '--cgroup',
      'bpftrace',
      'strace',
      'os.version',
    ])
      expect(stdout).toContain(text);
  });

  it('rejects a broken config file with a clear message and exit code 2', async () => {
    const file = path.join(tmp, 'bad.yaml');
    writeFileSync(file, 'probes:\n  interval: 10s\n  wal: { files: -3 }\nbogus: 1\n');
    const { code, stderr } = await agentCli(['--config', file, '--once']);
    expect(code).toBe(2);
    expect(stderr).toContain(`config file ${file} is invalid`);
    expect(stderr).toMatch(/\/probes\/wal\/files/);
  });
});

describe.concurrent('onset-agent doctor', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('checks each source for real and says why the others do not work', async () => {
    const { code, stdout } = await agentCli([
      'doctor',
      '--endpoint',
      server.otlpUrl,
      '--probe-dir',
      path.join(tmp, 'probes'),
    ]);
    expect(code).toBe(0);
    // Root with bpftrace installed here: it really attaches.
    expect(stdout).toMatch(
      /ok {2}bpftrace +found .*bpftrace, running as root, kernel BTF present; a test run attached \d+ probes/,
    );
    // How unmounts will be timed on this kernel (6.18 here: rseq_update and, on x86_64, the tick
    // check; the probe on every system call only with --unmount-next-syscall).
    expect(stdout).toMatch(
      process.arch === 'x64'
        ? /unmount spans end at the unmounting thread's return to user space \(rseq:rseq_update\) or its first timer tick back in user space/
        : /unmount spans end at the unmounting thread's return to user space \(rseq:rseq_update\) or its next system call/,
    );
    expect(stdout).toMatch(
      /no {2}strace +strace needs processes to attach to: give --pid, --comm or --cgroup/,
    );
    expect(stdout).toMatch(/ok {2}probe mount/);
    expect(stdout).toMatch(/no {2}probe http +no targets configured/);
    expect(stdout).toMatch(new RegExp(`ok  collector +${server.otlpUrl}/v1/traces answered 200`));
  });

  it('reports an unreachable collector and exits 1', async () => {
    const closed = await closedPort();
    const { code, stdout } = await agentCli([
      'doctor',
      '--endpoint',
      `http://127.0.0.1:${closed}`,
      '--no-bpftrace',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/no {2}bpftrace +turned off/);
    expect(stdout).toContain(
      `no  collector    http://127.0.0.1:${closed}/v1/traces unreachable: ECONNREFUSED`,
    );
  });
});

describe('configuration precedence: flags > environment > config file > defaults', () => {
  const file = path.join(tmp, 'agent.yaml');
  writeFileSync(
    file,
    [
      'serviceName: from-file',
      'endpoint: http://file-collector:4318',
      'headers: { Authorization: Bearer file-token }',
      'dependencies: { postgres: "15.4", glibc: "2.36" }',
      'resource: { deployment.environment.name: staging }',
      'filter: { comm: [postgres] }',
      'probes: { interval: 30s, wal: { files: 7 }, http: { targets: [{ url: "http://svc:8080/x", method: post, timeout: 2s }] } }',
      'sources: { strace: off }',
      'host: { cpu: false }',
    ].join('\n'),
  );

  it('uses sensible defaults with nothing given', () => {
    const c = loadConfig({}, {});
    expect(c).toMatchObject({
      serviceName: 'onset-agent',
      tracesUrl: 'http://localhost:4318/v1/traces',
      sources: { bpftrace: 'auto', strace: 'auto', probes: true },
      probes: { intervalMs: 10_000, wal: { files: 100 } },
      host: { cpu: true },
    });
  });

  it('reads the config file', () => {
    const c = loadConfig({ config: file }, {});
    expect(c.serviceName).toBe('from-file');
    expect(c.tracesUrl).toBe('http://file-collector:4318/v1/traces');
    expect(c.headers).toEqual({ Authorization: 'Bearer file-token' });
    expect(c.resource).toEqual({
      'deployment.environment.name': 'staging',
      'dependency.postgres': '15.4',
      'dependency.glibc': '2.36',
    });
    expect(c.filter.comms).toEqual(['postgres']);
    expect(c.sources.strace).toBe('off');
    expect(c.host.cpu).toBe(false);
    expect(c.probes.intervalMs).toBe(30_000);
    expect(c.probes.http.targets).toEqual([
      { url: 'http://svc:8080/x', method: 'POST', name: undefined, headers: {}, timeoutMs: 2_000 },
    ]);
  });

  it('lets the standard OpenTelemetry environment override the file', () => {
    const env = {
      ONSET_AGENT_CONFIG: file,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env-collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20env-token',
      OTEL_SERVICE_NAME: 'from-env',
      OTEL_RESOURCE_ATTRIBUTES: 'dependency.postgres=16.1,team=storage',
    };
    const c = loadConfig({}, env);
    expect(c.tracesUrl).toBe('http://env-collector:4318/v1/traces');
    expect(c.tracesUrlFrom).toBe('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(c.headers.Authorization).toBe('Bearer env-token');
    expect(c.serviceName).toBe('from-env');
    expect(c.resource['dependency.postgres']).toBe('16.1');
    expect(c.resource.team).toBe('storage');
    expect(
      loadConfig({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x:1/custom' }).tracesUrl,
    ).toBe('http://x:1/custom');
  });

  it('lets flags override everything', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318', OTEL_SERVICE_NAME: 'from-env' };
    const c = loadConfig(
      {
        config: file,
        endpoint: 'http://flag:4318',
        serviceName: 'from-flag',
        dependency: ['postgres=17.0'],
        interval: '15s',
        bpftrace: false,
        pid: [42],
        comm: ['nginx'],
      },
      env,
    );
    expect(c.tracesUrl).toBe('http://flag:4318/v1/traces');
    expect(c.serviceName).toBe('from-flag');
    expect(c.resource['dependency.postgres']).toBe('17.0');
    expect(c.probes.intervalMs).toBe(15_000);
    expect(c.sources.bpftrace).toBe('off');
    expect(c.filter).toEqual({ pids: [42], comms: ['postgres', 'nginx'], cgroups: [] });
  });

  it('reads the tracing scope from the file and flags, with defaults on', () => {
    expect(loadConfig({}, {}).scope).toEqual({
      defaults: true,
      exclude: [],
      include: [],
      excludeProcesses: [],
      maxNewSeriesPerMinute: 50,
    });
    const scoped = path.join(tmp, 'scope.yaml');
    writeFileSync(
      scoped,
      [
        'scope:',
        '  defaults: false',
        "  exclude: ['/srv/scratch/**']",
        "  include: ['/tmp/playwright-keep/**']",
        '  excludeProcesses: [chromium]',
        '  maxNewSeriesPerMinute: 20',
      ].join('\n'),
    );
    const c = loadConfig({ config: scoped, exclude: ['/data/tmp/**'], maxNewSeries: 5 }, {});
    expect(c.scope).toEqual({
      defaults: false,
      exclude: ['/srv/scratch/**', '/data/tmp/**'],
      include: ['/tmp/playwright-keep/**'],
      excludeProcesses: ['chromium'],
      maxNewSeriesPerMinute: 5,
    });
    expect(() => loadConfig({ maxNewSeries: 0 }, {})).toThrow(/--max-new-series must be/);
    writeFileSync(scoped, 'scope: { exlude: [x] }');
    expect(() => loadConfig({ config: scoped }, {})).toThrow(/scope/);
  });

  it('explains bad values', () => {
    expect(() => loadConfig({ interval: '10ms' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ interval: '10ms' }, {})).toThrow(/at least 1s/);
    expect(() => loadConfig({ interval: 'soon' }, {})).toThrow(
      /--interval: invalid duration "soon"/,
    );
    expect(() => loadConfig({ dependency: ['postgres'] }, {})).toThrow(
      /--dependency expects key=value/,
    );
    expect(() => loadConfig({ config: path.join(tmp, 'missing.yaml') }, {})).toThrow(
      /cannot read config file .*ENOENT/,
    );
  });
});
