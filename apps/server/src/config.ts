import path from 'node:path';
import { parseDuration } from '@onset/contract';

export type Scope = 'ingest' | 'deploys' | 'read' | 'admin';
export const SCOPES: readonly Scope[] = ['ingest', 'deploys', 'read', 'admin'];

export interface Config {
  host: string;
  port: number;
  /** Second listener for stock OTLP exporters; 0 disables it. */
  otlpPort: number;
  databaseUrl: string | undefined;
  dataDir: string;
  /** token -> scopes; empty means open (allowed only on loopback binds). */
  tokens: Map<string, Set<Scope>>;
  maxBodyBytes: number;
  rawRetentionMs: number;
  histogramRetentionMs: number;
  maxSpanDurationMs: number;
  maxAttributesPerSpan: number;
  logLevel: string;
  /** Public base URL used in links (webhooks, UI). */
  publicUrl: string | undefined;
  /** When set, GET /metrics needs `Authorization: Bearer <this>` (ONSET_METRICS_TOKEN). */
  metricsToken: string | undefined;
  /** When both are set, deploy markers and regressions are also posted as Grafana annotations. */
  grafanaUrl: string | undefined;
  grafanaToken: string | undefined;
  /** While PostgreSQL is away, background work probes it with backoff up to this interval (ONSET_DB_RETRY_MAX). */
  dbRetryMaxMs: number;
  /** Link for evidence spans, e.g. http://jaeger:16686/trace/{trace_id} (ONSET_TRACE_URL_TEMPLATE). */
  traceUrlTemplate: string | undefined;
}

export class ConfigError extends Error {}

/** For entry points: the configuration, or a one-line message and exit code 2 when it is invalid. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`onset: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

function int(env: NodeJS.ProcessEnv, key: string, dflt: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new ConfigError(`${key} must be a non-negative integer, got "${raw}"`);
  return n;
}

function duration(env: NodeJS.ProcessEnv, key: string, dflt: string): number {
  try {
    return parseDuration(env[key] || dflt);
  } catch (e) {
    throw new ConfigError(`${key}: ${(e as Error).message}`);
  }
}

/**
 * ONSET_TOKENS="ingest:tok-agent,read+deploys:tok-ci,admin:tok-root"
 * Each entry is scopes joined by '+', a colon, then the token. `admin` grants every scope.
 */
export function parseTokens(spec: string | undefined): Map<string, Set<Scope>> {
  const tokens = new Map<string, Set<Scope>>();
  if (!spec) return tokens;
  for (const entry of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    if (colon <= 0 || colon === entry.length - 1)
      throw new ConfigError(
        `ONSET_TOKENS entry "${entry.slice(0, 20)}…" must look like scope[+scope]:token`,
      );
    const scopes = entry.slice(0, colon).split('+');
    const token = entry.slice(colon + 1);
    for (const s of scopes)
      if (!SCOPES.includes(s as Scope))
        throw new ConfigError(`ONSET_TOKENS: unknown scope "${s}" (use ${SCOPES.join(', ')})`);
    const set = new Set(scopes as Scope[]);
    if (set.has('admin')) SCOPES.forEach((s) => set.add(s));
    tokens.set(token, set);
  }
  return tokens;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cfg: Config = {
    host: env.ONSET_HOST || '127.0.0.1',
    port: int(env, 'ONSET_PORT', 8080),
    otlpPort: int(env, 'ONSET_OTLP_PORT', 4318),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.ONSET_DATA_DIR || '.onset'),
    tokens: parseTokens(env.ONSET_TOKENS),
    maxBodyBytes: int(env, 'ONSET_MAX_BODY_BYTES', 64 * 1024 * 1024),
    rawRetentionMs: duration(env, 'ONSET_RAW_RETENTION', '48h'),
    histogramRetentionMs: duration(env, 'ONSET_HISTOGRAM_RETENTION', '90d'),
    maxSpanDurationMs: duration(env, 'ONSET_MAX_SPAN_DURATION', '1d'),
    maxAttributesPerSpan: int(env, 'ONSET_MAX_ATTRIBUTES', 1024),
    logLevel: env.ONSET_LOG_LEVEL || 'info',
    publicUrl: env.ONSET_PUBLIC_URL || undefined,
    metricsToken: env.ONSET_METRICS_TOKEN || undefined,
    grafanaUrl: env.GRAFANA_URL || undefined,
    grafanaToken: env.GRAFANA_TOKEN || undefined,
    dbRetryMaxMs: duration(env, 'ONSET_DB_RETRY_MAX', '10s'),
    traceUrlTemplate: env.ONSET_TRACE_URL_TEMPLATE || undefined,
  };
  if (!isLoopback(cfg.host) && cfg.tokens.size === 0) {
    throw new ConfigError(
      `refusing to listen on ${cfg.host} without tokens: set ONSET_TOKENS (e.g. "admin:$(openssl rand -hex 16)") or bind to 127.0.0.1`,
    );
  }
  return cfg;
}
