/**
 * Resolve the agent's settings: built-in defaults < config file < standard
 * OpenTelemetry environment variables < command-line flags.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '@onset/contract';
import { OPERATION_DEFAULTS } from '../aggregate/fsync-operations.ts';
import {
  ConfigFileSchema,
  type AgentConfig,
  type ConfigFile,
  type HttpTarget,
  type SourceToggle,
} from './schema.ts';

export class ConfigError extends Error {}

/** Flags as commander hands them over (see cli.ts). */
export interface CliFlags {
  config?: string;
  endpoint?: string;
  header?: string[];
  serviceName?: string;
  resource?: string[];
  dependency?: string[];
  pid?: number[];
  comm?: string[];
  cgroup?: string[];
  bpftrace?: boolean;
  strace?: boolean;
  probes?: boolean;
  unmountNextSyscall?: boolean;
  interval?: string;
  probeDir?: string;
  spawnExtraFds?: number;
  walFiles?: number;
  mountTypes?: string[];
  mountMb?: number;
  httpTarget?: string[];
  logLevel?: string;
  once?: boolean;
  exclude?: string[];
  include?: string[];
  maxNewSeries?: number;
}

export const DEFAULTS = {
  serviceName: 'onset-agent',
  endpoint: 'http://localhost:4318',
  intervalMs: 10_000,
  probeDir: '/var/tmp/onset-agent',
  spawnCount: 3,
  spawnExtraFds: 5_000,
  walFiles: 100,
  mountTypes: ['tmpfs', 'overlay'] as ('tmpfs' | 'overlay')[],
  mountMb: 8,
  httpTimeoutMs: 5_000,
  batchSize: 1024,
  flushIntervalMs: 1_000,
  maxQueueSpans: 50_000,
  maxQueueMb: 32,
  exportTimeoutMs: 10_000,
  maxNewSeriesPerMinute: 50,
  fsyncGapMs: OPERATION_DEFAULTS.gapMs,
  maxBurstMs: OPERATION_DEFAULTS.maxBurstMs,
  operationWindowMs: OPERATION_DEFAULTS.windowMs,
  operationLatenessMs: OPERATION_DEFAULTS.latenessMs,
};

function duration(value: string | number | undefined, what: string, dflt: number): number {
  if (value === undefined) return dflt;
  if (typeof value === 'number') return value;
  try {
    return parseDuration(value);
  } catch (e) {
    throw new ConfigError(`${what}: ${(e as Error).message}`);
  }
}

/** "key=value" pairs from repeatable flags. */
function pairs(items: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items ?? []) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new ConfigError(`${flag} expects key=value, got "${item}"`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
}

function stringify(
  rec: Record<string, string | number | boolean> | undefined,
): Record<string, string> {
  return Object.fromEntries(Object.entries(rec ?? {}).map(([k, v]) => [k, String(v)]));
}

function withDependencyPrefix(rec: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rec).map(([k, v]) => [k.startsWith('dependency.') ? k : `dependency.${k}`, v]),
  );
}

function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `cannot read config file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  let data: unknown;
  try {
    data = parseYaml(text) ?? {}; // YAML is a superset of JSON: one parser for both
  } catch (e) {
    throw new ConfigError(
      `config file ${file} is not valid YAML/JSON: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  if (!Value.Check(ConfigFileSchema, data)) {
    const problems = [...Value.Errors(ConfigFileSchema, data)]
      .slice(0, 5)
      .map((e) => `${e.path || '/'}: ${e.message}`);
    throw new ConfigError(`config file ${file} is invalid:\n  ${problems.join('\n  ')}`);
  }
  return data;
}

function tracesUrl(
  flags: CliFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
): { url: string; from: string } {
  const append = (base: string) =>
    /\/v1\/traces\/?$/.test(base) ? base : `${base.replace(/\/+$/, '')}/v1/traces`;
  if (flags.endpoint) return { url: append(flags.endpoint), from: '--endpoint' };
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    return {
      url: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
      from: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    };
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT)
    return { url: append(env.OTEL_EXPORTER_OTLP_ENDPOINT), from: 'OTEL_EXPORTER_OTLP_ENDPOINT' };
  if (file.endpoint) return { url: append(file.endpoint), from: 'config file' };
  return { url: append(DEFAULTS.endpoint), from: 'default' };
}

function toggle(
  flag: boolean | undefined,
  file: boolean | 'auto' | 'off' | undefined,
): SourceToggle {
  if (flag === false) return 'off';
  if (file === false || file === 'off') return 'off';
  return 'auto';
}

function httpTargets(flags: CliFlags, file: ConfigFile): HttpTarget[] {
  const fromFile = (file.probes?.http?.targets ?? []).map((t) => ({
    url: t.url,
    method: (t.method ?? 'GET').toUpperCase(),
    name: t.name,
    headers: t.headers ?? {},
    timeoutMs: duration(t.timeout, `probes.http target ${t.url} timeout`, DEFAULTS.httpTimeoutMs),
  }));
  const fromFlags = (flags.httpTarget ?? []).map((url) => {
    if (!/^https?:\/\//.test(url))
      throw new ConfigError(`--http-target must be an http(s) URL, got "${url}"`);
    return { url, method: 'GET', headers: {}, timeoutMs: DEFAULTS.httpTimeoutMs };
  });
  return [...fromFile, ...fromFlags];
}

function operations(file: ConfigFile): AgentConfig['operations'] {
  const o = file.operations;
  const fsyncGapMs = duration(o?.fsyncGap, 'operations.fsyncGap', DEFAULTS.fsyncGapMs);
  const maxBurstMs = duration(o?.maxBurst, 'operations.maxBurst', DEFAULTS.maxBurstMs);
  const windowMs = duration(o?.window, 'operations.window', DEFAULTS.operationWindowMs);
  if (fsyncGapMs <= 0) throw new ConfigError('operations.fsyncGap must be more than 0');
  if (maxBurstMs < fsyncGapMs)
    throw new ConfigError('operations.maxBurst must be at least operations.fsyncGap');
  const latenessMs = duration(o?.lateness, 'operations.lateness', DEFAULTS.operationLatenessMs);
  if (windowMs < 1000) throw new ConfigError('operations.window must be at least 1s');
  return { enabled: o?.enabled ?? true, fsyncGapMs, maxBurstMs, windowMs, latenessMs };
}

function maxNewSeries(flags: CliFlags, file: ConfigFile): number {
  const n =
    flags.maxNewSeries ?? file.scope?.maxNewSeriesPerMinute ?? DEFAULTS.maxNewSeriesPerMinute;
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(`--max-new-series must be a whole number of at least 1, got "${n}"`);
  return n;
}

export function loadConfig(
  flags: CliFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): AgentConfig {
  const configFile = flags.config ?? env.ONSET_AGENT_CONFIG;
  const file: ConfigFile = configFile ? readConfigFile(configFile) : {};

  const envResource = env.OTEL_RESOURCE_ATTRIBUTES
    ? parseKeyPairsIntoRecord(env.OTEL_RESOURCE_ATTRIBUTES)
    : {};
  const serviceName =
    flags.serviceName ??
    env.OTEL_SERVICE_NAME ??
    envResource['service.name'] ??
    file.serviceName ??
    DEFAULTS.serviceName;
  delete envResource['service.name'];
  const resource = {
    ...stringify(file.resource),
    ...withDependencyPrefix(stringify(file.dependencies)),
    ...envResource,
    ...pairs(flags.resource, '--resource'),
    ...withDependencyPrefix(pairs(flags.dependency, '--dependency')),
  };

  const headers = {
    ...(file.headers ?? {}),
    ...(env.OTEL_EXPORTER_OTLP_HEADERS
      ? parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_HEADERS)
      : {}),
    ...(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS
      ? parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS)
      : {}),
    ...pairs(flags.header, '--header'),
  };

  const { url, from } = tracesUrl(flags, env, file);
  try {
    new URL(url);
  } catch {
    throw new ConfigError(`OTLP endpoint "${url}" (from ${from}) is not a valid URL`);
  }

  const intervalMs =
    flags.interval !== undefined
      ? duration(flags.interval, '--interval', DEFAULTS.intervalMs)
      : duration(file.probes?.interval, 'probes.interval', DEFAULTS.intervalMs);
  if (intervalMs < 1000) throw new ConfigError('the probe interval must be at least 1s');

  const mountTypes = (flags.mountTypes ??
    file.probes?.mount?.types ??
    DEFAULTS.mountTypes) as string[];
  for (const t of mountTypes)
    if (t !== 'tmpfs' && t !== 'overlay')
      throw new ConfigError(`mount probe type must be tmpfs or overlay, got "${t}"`);

  const logLevel = (flags.logLevel ?? file.logLevel ?? 'info') as AgentConfig['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    throw new ConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);

  return {
    serviceName,
    tracesUrl: url,
    tracesUrlFrom: from,
    headers,
    resource,
    logLevel,
    sources: {
      bpftrace: toggle(flags.bpftrace, file.sources?.bpftrace),
      strace: toggle(flags.strace, file.sources?.strace),
      probes: flags.probes ?? file.sources?.probes ?? true,
      unmountNextSyscall: flags.unmountNextSyscall ?? file.sources?.unmountNextSyscall ?? false,
    },
    filter: {
      pids: [...(file.filter?.pid ?? []), ...(flags.pid ?? [])],
      comms: [...(file.filter?.comm ?? []), ...(flags.comm ?? [])],
      cgroups: [...(file.filter?.cgroup ?? []), ...(flags.cgroup ?? [])],
    },
    probes: {
      intervalMs,
      dir: path.resolve(flags.probeDir ?? file.probes?.dir ?? DEFAULTS.probeDir),
      spawn: {
        enabled: file.probes?.spawn?.enabled ?? true,
        count: file.probes?.spawn?.count ?? DEFAULTS.spawnCount,
        extraFds: flags.spawnExtraFds ?? file.probes?.spawn?.extraFds ?? DEFAULTS.spawnExtraFds,
      },
      wal: {
        enabled: file.probes?.wal?.enabled ?? true,
        files: flags.walFiles ?? file.probes?.wal?.files ?? DEFAULTS.walFiles,
      },
      mount: {
        enabled: file.probes?.mount?.enabled ?? true,
        types: mountTypes as ('tmpfs' | 'overlay')[],
        sizeMb: flags.mountMb ?? file.probes?.mount?.sizeMb ?? DEFAULTS.mountMb,
      },
      http: { targets: httpTargets(flags, file) },
    },
    scope: {
      defaults: file.scope?.defaults ?? true,
      exclude: [...(file.scope?.exclude ?? []), ...(flags.exclude ?? [])],
      include: [...(file.scope?.include ?? []), ...(flags.include ?? [])],
      excludeProcesses: file.scope?.excludeProcesses ?? [],
      maxNewSeriesPerMinute: maxNewSeries(flags, file),
    },
    operations: operations(file),
    host: { cpu: file.host?.cpu ?? true },
    export: {
      batchSize: file.export?.batchSize ?? DEFAULTS.batchSize,
      flushIntervalMs: duration(
        file.export?.flushInterval,
        'export.flushInterval',
        DEFAULTS.flushIntervalMs,
      ),
      maxQueueSpans: file.export?.maxQueueSpans ?? DEFAULTS.maxQueueSpans,
      maxQueueBytes: Math.round((file.export?.maxQueueMb ?? DEFAULTS.maxQueueMb) * 1024 * 1024),
      timeoutMs: duration(file.export?.timeout, 'export.timeout', DEFAULTS.exportTimeoutMs),
    },
    once: flags.once ?? false,
    configFile,
  };
}
