/**
 * The config file (YAML or JSON). Every key is optional; see docs/agent.md
 * for an annotated example. Durations are strings like "10s" or milliseconds.
 */
import { Type, type Static } from '@sinclair/typebox';

const Duration = Type.Union([Type.String(), Type.Number({ minimum: 0 })]);
const StringMap = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
);
const Toggle = Type.Union([Type.Literal('auto'), Type.Literal('off'), Type.Boolean()]);

const HttpTargetSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://' }),
    method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$' })),
    /** Series name; defaults to "<METHOD> <path>". */
    name: Type.Optional(Type.String()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    timeout: Type.Optional(Duration),
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    serviceName: Type.Optional(Type.String({ minLength: 1 })),
    endpoint: Type.Optional(Type.String({ pattern: '^https?://' })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    resource: Type.Optional(StringMap),
    dependencies: Type.Optional(StringMap),
    logLevel: Type.Optional(
      Type.Union(['debug', 'info', 'warn', 'error'].map((l) => Type.Literal(l))),
    ),
    sources: Type.Optional(
      Type.Object(
        {
          bpftrace: Type.Optional(Toggle),
          strace: Type.Optional(Toggle),
          probes: Type.Optional(Type.Boolean()),
          /** End unmounts of threads without rseq at their next system call (exact; costly). */
          unmountNextSyscall: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    filter: Type.Optional(
      Type.Object(
        {
          pid: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }))),
          comm: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
          cgroup: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        },
        { additionalProperties: false },
      ),
    ),
    probes: Type.Optional(
      Type.Object(
        {
          interval: Type.Optional(Duration),
          dir: Type.Optional(Type.String({ minLength: 1 })),
          spawn: Type.Optional(
            Type.Object(
              {
                enabled: Type.Optional(Type.Boolean()),
                count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
                extraFds: Type.Optional(Type.Integer({ minimum: 0 })),
              },
              { additionalProperties: false },
            ),
          ),
          wal: Type.Optional(
            Type.Object(
              {
                enabled: Type.Optional(Type.Boolean()),
                files: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
              },
              { additionalProperties: false },
            ),
          ),
          mount: Type.Optional(
            Type.Object(
              {
                enabled: Type.Optional(Type.Boolean()),
                types: Type.Optional(
                  Type.Array(Type.Union([Type.Literal('tmpfs'), Type.Literal('overlay')])),
                ),
                sizeMb: Type.Optional(Type.Number({ minimum: 0, maximum: 65536 })),
              },
              { additionalProperties: false },
            ),
          ),
          http: Type.Optional(
            Type.Object(
              { targets: Type.Optional(Type.Array(HttpTargetSchema)) },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    scope: Type.Optional(
      Type.Object(
        {
          defaults: Type.Optional(Type.Boolean()),
          exclude: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
          include: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
          excludeProcesses: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
          maxNewSeriesPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    operations: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          fsyncGap: Type.Optional(Duration),
          maxBurst: Type.Optional(Duration),
          window: Type.Optional(Duration),
          lateness: Type.Optional(Duration),
        },
        { additionalProperties: false },
      ),
    ),
    host: Type.Optional(
      Type.Object(
        {
          /** Report the host's stolen CPU time and CPU pressure each operations window. */
          cpu: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    export: Type.Optional(
      Type.Object(
        {
          batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
          flushInterval: Type.Optional(Duration),
          maxQueueSpans: Type.Optional(Type.Integer({ minimum: 1 })),
          maxQueueMb: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
          timeout: Type.Optional(Duration),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;

export interface HttpTarget {
  url: string;
  method: string;
  name?: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export type SourceToggle = 'auto' | 'off';

/** Everything resolved: defaults < config file < environment < flags. */
export interface AgentConfig {
  serviceName: string;
  /** Full OTLP/HTTP traces URL (…/v1/traces). */
  tracesUrl: string;
  /** Where the URL came from, for the log. */
  tracesUrlFrom: string;
  headers: Record<string, string>;
  /** Extra resource attributes (including dependency.*). */
  resource: Record<string, string>;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  sources: {
    bpftrace: SourceToggle;
    strace: SourceToggle;
    probes: boolean;
    /**
     * bpftrace: end the unmounts of threads without rseq at their next system call, exactly,
     * with a probe on every system call of the host (docs/agent.md "Unmount time"); otherwise
     * at the first timer tick after it is back in user space (x86_64).
     */
    unmountNextSyscall: boolean;
  };
  filter: { pids: number[]; comms: string[]; cgroups: string[] };
  probes: {
    intervalMs: number;
    dir: string;
    spawn: { enabled: boolean; count: number; extraFds: number };
    wal: { enabled: boolean; files: number };
    mount: { enabled: boolean; types: ('tmpfs' | 'overlay')[]; sizeMb: number };
    http: { targets: HttpTarget[] };
  };
  /** What traced events are reported (telemetry/scope.ts, series-cap.ts; docs/agent.md "Scope"). */
  scope: {
    /** The built-in excludes (config/scope-defaults.ts) when tracing the whole host. */
    defaults: boolean;
    exclude: string[];
    include: string[];
    excludeProcesses: string[];
    maxNewSeriesPerMinute: number;
  };
  /** Operation-level fsync measurement (aggregate/fsync-operations.ts, docs/agent.md "Operations"). */
  operations: {
    enabled: boolean;
    fsyncGapMs: number;
    maxBurstMs: number;
    windowMs: number;
    latenessMs: number;
  };
  /** The host's own resources (host/cpu-windows.ts, docs/agent.md "Host CPU contention"). */
  host: {
    /** Report `cpu-steal` and `cpu-pressure` every `operations.windowMs`; one agent per host is enough. */
    cpu: boolean;
  };
  export: {
    batchSize: number;
    flushIntervalMs: number;
    maxQueueSpans: number;
    maxQueueBytes: number;
    timeoutMs: number;
  };
  /** Run one probe round, flush and exit (for CI and checks). */
  once: boolean;
  configFile?: string;
}
