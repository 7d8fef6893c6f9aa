/**
 * Self-tracing is switched on by Onset's own ONSET_SELF_TRACING=on, then it
 * is the OpenTelemetry Node SDK reading the standard OTEL_* variables: each case runs a fresh process (fixtures/selftrace-child.ts)
 * with an environment, against a real HTTP receiver on loopback. Off, the
 * SDK is not even loaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReceiver, type Receiver } from './slo-support.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, 'fixtures/selftrace-child.ts');

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
});

interface ChildReport {
  started: boolean;
  sdkLoaded: boolean;
  instrumentationLoaded: boolean;
  stdout: string;
}

/** Async: the receiver lives in this process and must answer while the child exports. */
async function run(env: Record<string, string>): Promise<ChildReport> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')),
  );
  const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', child], {
    cwd: path.resolve(here, '..'),
    env: { ...clean, OTEL_BSP_SCHEDULE_DELAY: '50', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = r.stdout.trim().split('\n');
  return { ...(JSON.parse(lines[lines.length - 1]!) as ChildReport), stdout: r.stdout };
}

/** Switched on, as an operator does: the SDK then reads the OTEL_* variables given. */
const runOn = (env: Record<string, string>) => run({ ONSET_SELF_TRACING: 'on', ...env });

const endpoint = () => `http://127.0.0.1:${rx.port}`;
const exportsSince = (n: number) => rx.requests.slice(n).filter((q) => q.path === '/v1/traces');

describe('off unless asked, and then free', () => {
  it('no OTEL_* variables: not started, the SDK and the instrumentation never loaded', async () => {
    expect(await run({})).toMatchObject({
      started: false,
      sdkLoaded: false,
      instrumentationLoaded: false,
    });
  });

  it('an OTEL_EXPORTER_OTLP_ENDPOINT exported in the shell for other services does not turn it on', async () => {
    const n = rx.requests.length;
    expect(
      await run({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(), OTEL_TRACES_EXPORTER: 'otlp' }),
    ).toMatchObject({ started: false, sdkLoaded: false, instrumentationLoaded: false });
    expect(exportsSince(n)).toHaveLength(0);
  });

  it('OTEL_SDK_DISABLED=true wins over ONSET_SELF_TRACING=on', async () => {
    const n = rx.requests.length;
    expect(
      await runOn({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(), OTEL_SDK_DISABLED: 'true' }),
    ).toMatchObject({ started: false, sdkLoaded: false });
    expect(exportsSince(n)).toHaveLength(0);
  });

  it('OTEL_TRACES_EXPORTER=none wins over ONSET_SELF_TRACING=on', async () => {
    expect(
      (await runOn({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(), OTEL_TRACES_EXPORTER: 'none' }))
        .started,
    ).toBe(false);
  });
});

describe('on (ONSET_SELF_TRACING=on): the SDK honours the standard variables', () => {
  it('OTEL_EXPORTER_OTLP_ENDPOINT: OTLP/HTTP protobuf by default, loaded and exported', async () => {
    const n = rx.requests.length;
    expect(await runOn({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint() })).toMatchObject({
      started: true,
      sdkLoaded: true,
      instrumentationLoaded: true,
    });
    const got = exportsSince(n);
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['content-type']).toBe('application/x-protobuf');
    expect(got[0]!.raw).toContain('probe-span');
    expect(got[0]!.raw).toContain('onset-server'); // the default service.name
  });

  it('OTEL_EXPORTER_OTLP_PROTOCOL=http/json, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS', async () => {
    const n = rx.requests.length;
    await runOn({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(),
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'onset-eu-1',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer tok-123',
    });
    const got = exportsSince(n);
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['content-type']).toBe('application/json');
    expect(got[0]!.headers.authorization).toBe('Bearer tok-123');
    const body = got[0]!.json as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ spans: Array<{ name: string }> }>;
      }>;
    };
    const attrs = Object.fromEntries(
      body.resourceSpans[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue]),
    );
    expect(attrs['service.name']).toBe('onset-eu-1');
    expect(attrs['deployment.environment.name']).toBe('staging');
    expect(attrs['service.instance.id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name)).toEqual(['probe-span']);
  });

  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as the full URL', async () => {
    const n = rx.requests.length;
    await runOn({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint()}/custom/traces` });
    expect(rx.requests.slice(n).map((q) => q.path)).toEqual(['/custom/traces']);
  });

  it('OTEL_TRACES_SAMPLER=always_off: started, nothing exported', async () => {
    const n = rx.requests.length;
    expect(
      (await runOn({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(), OTEL_TRACES_SAMPLER: 'always_off' }))
        .started,
    ).toBe(true);
    expect(exportsSince(n)).toHaveLength(0);
  });

  it('OTEL_TRACES_EXPORTER=console: spans on stdout, nothing sent', async () => {
    const n = rx.requests.length;
    const r = await runOn({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(),
      OTEL_TRACES_EXPORTER: 'console',
    });
    expect(r.started).toBe(true);
    expect(r.stdout).toContain("name: 'probe-span'");
    expect(exportsSince(n)).toHaveLength(0);
  });
});
