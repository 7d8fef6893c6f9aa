/** The `onset-agent` command line (commander). */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { CliFlags } from './config/load.ts';
import { DEFAULTS } from './config/load.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
const collectList = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];
const collectInt = (value: string, previous: number[] = []): number[] => [
  ...previous,
  ...value.split(',').map((s) => positiveInt(s.trim())),
];

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

const HELP_AFTER = `
What it measures (each span carries onset.op):
  spawn    fork/vfork/clone/clone3 until the child's execve succeeds, with the
           method, the executable, the parent's open-fd count and RSS
  fsync    fsync/fdatasync/syncfs with the directory (and file) and process
  unmount  umount/umount2 with the mount point, filesystem type and the
           system's dirty/writeback bytes when it started
  request  HTTP calls to --http-target URLs from the caller's side, with any
           Server-Timing the target returns

Sources, best first (the log says which are used and why):
  bpftrace  eBPF, host-wide or filtered (--pid/--comm/--cgroup); needs root
  strace    fallback: attaches to --pid/--comm/--cgroup processes (-f)
  probes    synthetic workloads every --interval, always: spawn /bin/true
            (also with many fds open), WAL-style unlink+fsync, tmpfs/overlayfs
            mount+write+unmount (root only), HTTP targets

Environment (standard OpenTelemetry):
  OTEL_EXPORTER_OTLP_ENDPOINT   collector base URL (default ${DEFAULTS.endpoint})
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full traces URL, used as is
  OTEL_EXPORTER_OTLP_HEADERS    e.g. "Authorization=Bearer <ingest token>"
  OTEL_SERVICE_NAME             service.name (default ${DEFAULTS.serviceName})
  OTEL_RESOURCE_ATTRIBUTES      extra resource attributes, e.g. dependency.glibc=2.36
  ONSET_AGENT_CONFIG            config file, same as --config
Precedence: flags > environment > config file > defaults.

Resource attributes always sent: service.name, host.name, os.type,
os.version (kernel release), host.arch, plus dependency.* from config.

Examples:
  onset-agent                                   # defaults: everything this host allows
  onset-agent doctor                            # which sources work here, and why not
  onset-agent --endpoint http://onset:4318 --comm postgres --dependency postgres=16.4
  onset-agent --no-bpftrace --pid 4242          # strace fallback on one process tree
  onset-agent --http-target http://localhost:8080/api/lookup --interval 15s
`;

export interface CliActions {
  run(flags: CliFlags): Promise<void>;
  doctor(flags: CliFlags): Promise<void>;
}

export function buildCli(actions: CliActions): Command {
  const program = new Command('onset-agent')
    .description(
      'Onset host agent: measures process spawns, fsyncs, unmounts and HTTP requests on this Linux host and sends them as OpenTelemetry spans (OTLP/HTTP).',
    )
    .option('-c, --config <file>', 'YAML or JSON config file (see docs/agent.md)')
    .option('--endpoint <url>', 'OTLP/HTTP collector base URL; /v1/traces is appended')
    .option('--header <key=value>', 'extra HTTP header for exports (repeatable)', collect)
    .option('--service-name <name>', 'service.name of the spans')
    .option('--resource <key=value>', 'extra resource attribute (repeatable)', collect)
    .option(
      '--dependency <name=version>',
      'dependency.<name> resource attribute for cohorts (repeatable)',
      collect,
    )
    .option(
      '--pid <pid>',
      'trace only this process and its children (repeatable, comma-separated)',
      collectInt,
    )
    .option(
      '--comm <name>',
      'trace only processes with this name (repeatable, comma-separated)',
      collectList,
    )
    .option(
      '--cgroup <path>',
      'trace only processes in this cgroup v2 (path under /sys/fs/cgroup; repeatable)',
      collect,
    )
    .option(
      '--exclude <glob>',
      'leave out traced events on these paths (repeatable; e.g. "/srv/scratch/**")',
      collect,
    )
    .option(
      '--include <glob>',
      'report traced events on these paths even when an exclude matches (repeatable)',
      collect,
    )
    .option(
      '--max-new-series <n>',
      `new series per minute from traced events; spans of more are dropped and counted (default ${DEFAULTS.maxNewSeriesPerMinute})`,
      (v: string) => Number(v),
    )
    .option('--no-bpftrace', 'do not use bpftrace')
    .option('--no-strace', 'do not use strace')
    .option('--no-probes', 'do not run synthetic probes')
    .option(
      '--unmount-next-syscall',
      'bpftrace: end unmounts of threads without rseq (Go, musl) at their next system call: exact, but a probe on every system call of the host (a spawn-heavy workload runs ~15-30 % slower); default: at the first timer tick back in user space, at most one tick late',
    )
    .option(
      '--interval <duration>',
      `time between probe rounds (default ${DEFAULTS.intervalMs / 1000}s; the first round runs at once)`,
    )
    .option(
      '--probe-dir <dir>',
      `where probes write files and mount (default ${DEFAULTS.probeDir})`,
    )
    .option(
      '--spawn-extra-fds <n>',
      `extra open fds for the many-fds spawn probe (default ${DEFAULTS.spawnExtraFds})`,
      positiveInt,
    )
    .option(
      '--wal-files <n>',
      `files per WAL-removal pass (default ${DEFAULTS.walFiles})`,
      positiveInt,
    )
    .option(
      '--mount-types <list>',
      'filesystems for the unmount probe: tmpfs,overlay (default both)',
      collectList,
    )
    .option(
      '--mount-mb <n>',
      `MB written before each probe unmount (default ${DEFAULTS.mountMb})`,
      positiveInt,
    )
    .option('--http-target <url>', 'URL for the request probe (repeatable)', collect)
    .addOption(
      new Option('--log-level <level>', 'log detail').choices(['debug', 'info', 'warn', 'error']),
    )
    .option('--once', 'run one probe round, send everything and exit')
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(run onset-agent --help for usage)')
    .action(async () => actions.run(program.opts<CliFlags>()));

  program
    .command('doctor')
    .description(
      'check which sources work on this host, why the others do not, and whether the collector answers',
    )
    .action(async () => actions.doctor(program.opts<CliFlags>()));
  return program;
}
