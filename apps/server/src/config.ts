/**
 * The server's configuration, read from the environment through one zod
 * schema: every variable with its default, its type and its conversion in
 * one place (docs/deploy.md lists them; a test keeps that list complete).
 * A bad value stops the server with a message naming the variable.
 */
import path from 'node:path';
import { z } from 'zod';
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
  /** Citus: `auto` distributes when the database has the extension, `citus` creates it, `off` never (ONSET_DISTRIBUTED; db/citus.ts). */
  distributed: 'auto' | 'citus' | 'off';
  /** Citus: the pool's sessions set citus.max_cached_conns_per_worker to this; 0 leaves the database's (ONSET_CITUS_CACHED_CONNS; db/pool.ts). */
  citusCachedConns: number;
  /** Link for evidence spans, e.g. http://jaeger:16686/trace/{trace_id} (ONSET_TRACE_URL_TEMPLATE). */
  traceUrlTemplate: string | undefined;
  /** Port of the embedded PostgreSQL (unset: a free one); the supervisor keeps it across restarts. */
  embeddedPgPort: number | undefined;
  /** `npm start` also runs the local agent unless ONSET_AGENT=off. */
  withAgent: boolean;
  /** Cardinality limits on series and resources, per service and in total; 0 disables one (docs/api.md). */
  cardinality: CardinalityLimits;
  /** Extra Host names an open-mode server answers to (ONSET_ALLOWED_HOSTS; auth/browser.ts). */
  allowedHosts: string[];
  /** Longest a client may take to send a whole request, headers and body (ONSET_REQUEST_TIMEOUT). */
  requestTimeoutMs: number;
  /** OTLP exports one token may have in flight; 0 = no limit (ONSET_INGEST_CONCURRENCY; auth/ingest-limit.ts). */
  ingestConcurrency: number;
  /** Worker threads decoding trace exports; 0 (default) decodes on the main thread (ONSET_INGEST_WORKERS; otlp/decode-pool.ts). */
  ingestWorkers: number;
  /** Ingest transactions in flight at once (ONSET_INGEST_WRITERS; otlp/group-commit.ts). */
  ingestWriters: number;
  /** Longest a histogram or duration waits to be folded with later transactions' under load, 0 never (ONSET_HISTOGRAM_FOLD; otlp/fold-journal.ts). */
  histogramFoldMs: number;
  /** How often exemplar keep rates are re-read from the cluster's histograms; 0 = never (ONSET_EXEMPLAR_RATE_INTERVAL; otlp/exemplar-rates.ts). */
  exemplarRateIntervalMs: number;
  /** Detection shards a new cluster is split into (ONSET_DETECT_SHARDS; detection/shards.ts). */
  detectShards: number;
  /** A server's shard leases lapse this long after its last renewal (ONSET_DETECT_LEASE_TTL). */
  detectLeaseTtlMs: number;
  /** How often each server runs its scheduled detection pass, whole minutes (ONSET_DETECT_INTERVAL; detection/tasks.ts). */
  detectIntervalMs: number;
  /** Per-service deploy verdict settings (ONSET_VERDICT_SERVICES; docs/verdicts.md). */
  verdictServices: Record<string, VerdictServiceSettings>;
}

/** What ONSET_VERDICT_SERVICES may set for a service (the request's query may override each). */
export interface VerdictServiceSettings {
  p50Ratio?: number;
  p99Ratio?: number;
  minCount?: number;
  windowMs?: number;
}

/** Detection shards of a new cluster (ONSET_DETECT_SHARDS; detection/shards.ts). */
export const DEFAULT_DETECT_SHARDS = 64;

export interface CardinalityLimits {
  seriesPerService: number;
  series: number;
  resourcesPerService: number;
  resources: number;
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

/** A whole number >= 0. */
const envInt = (dflt: number) =>
  z.coerce
    .number({ error: 'must be a non-negative integer' })
    .int({ error: 'must be a non-negative integer' })
    .min(0, { error: 'must be a non-negative integer' })
    .default(dflt);

/** A duration such as 500ms, 10s, 5m, 48h or 90d, in milliseconds. */
export const envDuration = (dflt: string) =>
  z
    .string()
    .default(dflt)
    .transform((s, ctx) => {
      try {
        return parseDuration(s);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    });

const optionalString = z.string().optional();

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

/** Every variable the server reads (the agent, the CLI and compose have their own). */
export const ServerEnv = z.object({
  ONSET_HOST: z.string().default('127.0.0.1'),
  ONSET_PORT: envInt(8080),
  ONSET_OTLP_PORT: envInt(4318),
  DATABASE_URL: optionalString,
  ONSET_DATA_DIR: z.string().default('.onset'),
  // Token values are secrets: its errors come from parseTokens, which never echoes a token.
  ONSET_TOKENS: optionalString,
  ONSET_MAX_BODY_BYTES: envInt(64 * 1024 * 1024),
  ONSET_RAW_RETENTION: envDuration('48h'),
  ONSET_HISTOGRAM_RETENTION: envDuration('90d'),
  ONSET_MAX_SPAN_DURATION: envDuration('1d'),
  ONSET_MAX_ATTRIBUTES: envInt(1024),
  ONSET_LOG_LEVEL: z.string().default('info'),
  ONSET_PUBLIC_URL: optionalString,
  ONSET_METRICS_TOKEN: optionalString,
  GRAFANA_URL: optionalString,
  GRAFANA_TOKEN: optionalString,
  ONSET_DB_RETRY_MAX: envDuration('10s'),
  ONSET_DISTRIBUTED: z
    .enum(['auto', 'citus', 'off'], { error: 'must be auto, citus or off' })
    .default('auto'),
  ONSET_CITUS_CACHED_CONNS: envInt(8),
  ONSET_TRACE_URL_TEMPLATE: optionalString,
  ONSET_EMBEDDED_PG_PORT: envInt(0),
  ONSET_AGENT: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
  // Read by observability/tracing.ts before the server is built; declared here to be validated.
  ONSET_SELF_TRACING: z.enum(['on', 'off'], { error: 'must be on or off' }).default('off'),
  ONSET_MAX_SERIES_PER_SERVICE: envInt(2000),
  ONSET_MAX_SERIES: envInt(50_000),
  ONSET_MAX_RESOURCES_PER_SERVICE: envInt(2000),
  ONSET_MAX_RESOURCES: envInt(50_000),
  ONSET_ALLOWED_HOSTS: optionalString,
  ONSET_REQUEST_TIMEOUT: envDuration('60s'),
  ONSET_INGEST_CONCURRENCY: envInt(16),
  ONSET_INGEST_WORKERS: envInt(0),
  ONSET_INGEST_WRITERS: envInt(1),
  ONSET_HISTOGRAM_FOLD: envDuration('1s'),
  ONSET_EXEMPLAR_RATE_INTERVAL: envDuration('30s'),
  ONSET_DETECT_SHARDS: envInt(DEFAULT_DETECT_SHARDS),
  ONSET_DETECT_LEASE_TTL: envDuration('30s'),
  ONSET_DETECT_INTERVAL: envDuration('1m'),
  ONSET_VERDICT_SERVICES: optionalString,
});

const durationText = z.string().transform((s, ctx) => {
  try {
    return parseDuration(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/** ONSET_VERDICT_SERVICES='{"checkout": {"p50_ratio": 1.05, "window": "15m"}}' */
const VerdictServices = z.record(
  z.string(),
  z
    .object({
      p50_ratio: z.number().min(1).max(1000).optional(),
      p99_ratio: z.number().min(1).max(1000).optional(),
      min_count: z.number().int().min(1).optional(),
      window: durationText
        .refine((ms) => ms >= 60_000 && ms <= 2 * 3_600_000, {
          message: 'window must be 1m to 2h',
        })
        .optional(),
    })
    .strict(),
);

function parseVerdictServices(text: string | undefined): Record<string, VerdictServiceSettings> {
  if (!text) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(
      'ONSET_VERDICT_SERVICES must be JSON, e.g. {"checkout": {"p50_ratio": 1.05}}',
    );
  }
  const r = VerdictServices.safeParse(json);
  if (!r.success)
    throw new ConfigError(
      `ONSET_VERDICT_SERVICES: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return Object.fromEntries(
    Object.entries(r.data).map(([service, v]) => [
      service,
      {
        ...(v.p50_ratio !== undefined ? { p50Ratio: v.p50_ratio } : {}),
        ...(v.p99_ratio !== undefined ? { p99Ratio: v.p99_ratio } : {}),
        ...(v.min_count !== undefined ? { minCount: v.min_count } : {}),
        ...(v.window !== undefined ? { windowMs: v.window } : {}),
      },
    ]),
  );
}

/** Variables whose values must never appear in an error message. */
const SECRET = /TOKEN|PASSWORD|DATABASE_URL/;

/**
 * The environment parsed by `schema`. An empty variable counts as unset (so
 * `FOO=` in a compose file means "the default"); each invalid one is named
 * with its value, e.g. `ONSET_PORT must be a non-negative integer, got "80a"`.
 */
export function parseEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const present: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') present[key] = v;
  }
  const r = schema.safeParse(present);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => {
    const key = String(i.path[0]);
    const raw = present[key] ?? '';
    const shown = SECRET.test(key) || i.message.includes(`"${raw}"`) ? '' : `, got "${raw}"`;
    return `${key}${i.message.startsWith('must ') ? ' ' : ': '}${i.message}${shown}`;
  });
  throw new ConfigError(problems.join('; '));
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(ServerEnv, env);
  const cfg: Config = {
    host: e.ONSET_HOST,
    port: e.ONSET_PORT,
    otlpPort: e.ONSET_OTLP_PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.ONSET_DATA_DIR),
    tokens: parseTokens(e.ONSET_TOKENS),
    maxBodyBytes: e.ONSET_MAX_BODY_BYTES,
    rawRetentionMs: e.ONSET_RAW_RETENTION,
    histogramRetentionMs: e.ONSET_HISTOGRAM_RETENTION,
    maxSpanDurationMs: e.ONSET_MAX_SPAN_DURATION,
    maxAttributesPerSpan: e.ONSET_MAX_ATTRIBUTES,
    logLevel: e.ONSET_LOG_LEVEL,
    publicUrl: e.ONSET_PUBLIC_URL,
    metricsToken: e.ONSET_METRICS_TOKEN,
    grafanaUrl: e.GRAFANA_URL,
    grafanaToken: e.GRAFANA_TOKEN,
    dbRetryMaxMs: e.ONSET_DB_RETRY_MAX,
    distributed: e.ONSET_DISTRIBUTED,
    citusCachedConns: e.ONSET_CITUS_CACHED_CONNS,
    traceUrlTemplate: e.ONSET_TRACE_URL_TEMPLATE,
    embeddedPgPort: e.ONSET_EMBEDDED_PG_PORT || undefined,
    withAgent: e.ONSET_AGENT === 'on',
    cardinality: {
      seriesPerService: e.ONSET_MAX_SERIES_PER_SERVICE,
      series: e.ONSET_MAX_SERIES,
      resourcesPerService: e.ONSET_MAX_RESOURCES_PER_SERVICE,
      resources: e.ONSET_MAX_RESOURCES,
    },
    allowedHosts: (e.ONSET_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
    requestTimeoutMs: e.ONSET_REQUEST_TIMEOUT,
    ingestConcurrency: e.ONSET_INGEST_CONCURRENCY,
    ingestWorkers: e.ONSET_INGEST_WORKERS,
    ingestWriters: Math.max(1, e.ONSET_INGEST_WRITERS),
    histogramFoldMs: e.ONSET_HISTOGRAM_FOLD,
    exemplarRateIntervalMs: e.ONSET_EXEMPLAR_RATE_INTERVAL,
    detectShards: Math.max(1, e.ONSET_DETECT_SHARDS),
    detectLeaseTtlMs: Math.max(1000, e.ONSET_DETECT_LEASE_TTL),
    // Passes start at minute boundaries (tasks.ts): whole minutes, at least one.
    detectIntervalMs: Math.max(1, Math.round(e.ONSET_DETECT_INTERVAL / 60_000)) * 60_000,
    verdictServices: parseVerdictServices(e.ONSET_VERDICT_SERVICES),
  };
  if (!isLoopback(cfg.host) && cfg.tokens.size === 0) {
    throw new ConfigError(
      `refusing to listen on ${cfg.host} without tokens: set ONSET_TOKENS (e.g. "admin:$(openssl rand -hex 16)") or bind to 127.0.0.1`,
    );
  }
  return cfg;
}

/**
 * Base URL for links in alerts (webhooks, the API's alert URLs): ONSET_PUBLIC_URL, else the
 * address the request came to, else the address the server listens on (jobs have no request).
 */
export function baseUrlOf(config: Config, req?: { protocol: string; host: string }): string {
  if (config.publicUrl) return config.publicUrl;
  if (req) return `${req.protocol}://${req.host}`;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

/**
 * Memory per cached detector, heap and typed-array backing stores together:
 * measured 6.3 KiB of heap plus 16.2 KiB of ArrayBuffers (its rings are
 * preallocated) with 400 minutes fed, 4 KiB + 16.2 KiB with 5 (node
 * --expose-gc, 20,000 detectors; process.memoryUsage heapUsed + arrayBuffers).
 * An earlier count of heap alone (8 KiB) let the default cache take ~700 MiB.
 */
export const DETECTOR_BYTES = 24 * 1024;

export interface DetectBudget {
  batchSize: number;
  /** Edge pairing: calls read, folded and written at a time (ONSET_PAIR_BATCH). */
  pairBatch: number;
  /** SLO pass: SLOs evaluated at a time (ONSET_SLO_BATCH). */
  sloBatch: number;
  cacheMaxSeries: number;
  cacheMb: number;
}

function positive(raw: string | undefined, dflt: number, name: string, integer: boolean): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got "${raw}"`);
  return n;
}

/**
 * Directories of Onset's own database (docs/regressions.md "Onset's own
 * noise"): the embedded PostgreSQL's data directory (`<ONSET_DATA_DIR>/pg`,
 * where the supervisor starts it), plus ONSET_OWN_PATHS (comma-separated: an
 * external PostgreSQL of Onset's on a host an agent traces). Steps on series
 * under them never join another incident and never page. Read at each pass.
 */
export function onsetOwnDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = [path.join(path.resolve(env.ONSET_DATA_DIR ?? '.onset'), 'pg')];
  for (const p of (env.ONSET_OWN_PATHS ?? '').split(','))
    if (p.trim()) dirs.push(path.resolve(p.trim()));
  return dirs;
}

/**
 * The detection pass's memory budget (detection/budget.ts explains it). Read
 * at each pass, not once at startup: a test or an operator's restart of the pass
 * sees a changed variable without a new Config.
 */
export function detectBudget(env: NodeJS.ProcessEnv = process.env): DetectBudget {
  const cacheMb = positive(env.ONSET_DETECT_CACHE_MB, 256, 'ONSET_DETECT_CACHE_MB', false);
  return {
    batchSize: positive(env.ONSET_DETECT_BATCH, 1000, 'ONSET_DETECT_BATCH', true),
    pairBatch: positive(env.ONSET_PAIR_BATCH, 5000, 'ONSET_PAIR_BATCH', true),
    sloBatch: positive(env.ONSET_SLO_BATCH, 500, 'ONSET_SLO_BATCH', true),
    cacheMb,
    cacheMaxSeries: Math.max(1, Math.floor((cacheMb * 1024 * 1024) / DETECTOR_BYTES)),
  };
}
