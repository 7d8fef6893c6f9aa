import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { diffLockfiles, LOCKFILE_FORMATS, type LockfileFormat } from '../lockfiles/index.ts';
import { detectCi } from './ci-env.ts';
import { DEPLOY_KINDS, isOneOf, type DeployInput } from '@onset/contract';

/** Bad flags or inputs: nothing was sent. */
export class UsageError extends Error {}

/** The POST /api/v1/deploys body (the contract's DeployInput), always with a time and an idempotency key. */
export type MarkerBody = Omit<DeployInput, 'at' | 'external_id'> & {
  at: string;
  external_id: string;
};

const FIELD_ORDER = [
  'service',
  'environment',
  'hosts',
  'kind',
  'component',
  'from_version',
  'to_version',
  'commit',
  'url',
  'description',
  'at',
] as const satisfies ReadonlyArray<keyof MarkerBody>;

export interface DeployFlags {
  service?: string;
  environment?: string;
  host?: string[];
  kind?: string;
  component?: string;
  fromVersion?: string;
  toVersion?: string;
  commit?: string;
  url?: string;
  description?: string;
  at?: string;
  externalId?: string;
  lockfileDiff?: string[];
  lockfileFormat?: string;
  kernel?: boolean;
  /** false with --no-ci: ignore CI environment variables. */
  ci?: boolean;
}

export interface Machine {
  now: number;
  hostname: string;
  /** `uname -r` (os.release() is the same uname(2) field). */
  kernelRelease: string;
  env: Record<string, string | undefined>;
}

function describeChange(
  file: string,
  c: { component: string; from: string | null; to: string | null },
): string {
  const name = path.basename(file);
  if (c.from && c.to) return `${name}: ${c.component} ${c.from} → ${c.to}`;
  if (c.to) return `${name}: added ${c.component} ${c.to}`;
  return `${name}: removed ${c.component} ${c.from}`;
}

/**
 * The default external_id: the same CI run sending the same marker again (a
 * retried job, or this command's own retries) must not make a second one.
 * Outside CI, a random nonce still covers this command's retries.
 */
function defaultExternalId(runId: string, m: Omit<MarkerBody, 'external_id'>): string {
  const identity = [
    runId,
    m.kind,
    m.service ?? '',
    m.environment ?? '',
    (m.hosts ?? []).join(','),
    m.component ?? '',
    m.from_version ?? '',
    m.to_version ?? '',
    m.commit ?? '',
  ];
  return `cli-${createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 40)}`;
}

/** Turn flags (+ CI environment, lockfiles, uname) into the markers to send. */
export function buildMarkers(flags: DeployFlags, machine: Machine): MarkerBody[] {
  const ci = flags.ci === false ? null : detectCi(machine.env);
  const hosts = [
    ...new Set(
      (flags.host ?? [])
        .flatMap((h) => h.split(','))
        .map((h) => h.trim())
        .filter(Boolean),
    ),
  ];
  if (flags.kind !== undefined && !isOneOf(DEPLOY_KINDS, flags.kind))
    throw new UsageError(`--kind must be one of ${DEPLOY_KINDS.join(', ')} (got "${flags.kind}")`);
  const at = flags.at ?? new Date(machine.now).toISOString();
  if (Number.isNaN(Date.parse(at)))
    throw new UsageError(`--at "${at}" is not an RFC 3339 time, e.g. 2026-11-20T10:42:00Z`);
  const url = flags.url ?? ci?.url;
  if (url !== undefined && !/^https?:\/\//i.test(url))
    throw new UsageError(`--url must be an http(s) link (got "${url.slice(0, 60)}")`);

  const common = {
    service: flags.service,
    environment: flags.environment ?? ci?.environment,
    hosts,
    commit: flags.commit ?? ci?.commit,
    url,
    description: flags.description,
    at,
  };
  let markers: Array<Omit<MarkerBody, 'external_id'>>;

  if (flags.lockfileDiff !== undefined) {
    if (flags.lockfileDiff.length !== 2)
      throw new UsageError(
        `--lockfile-diff takes two files, OLD and NEW (got ${flags.lockfileDiff.length})`,
      );
    if (flags.kind !== undefined && flags.kind !== 'dependency')
      throw new UsageError(
        '--lockfile-diff sends dependency markers; drop --kind or run a second command',
      );
    if (flags.kernel)
      throw new UsageError('--lockfile-diff and --kernel are separate markers; run two commands');
    if (
      flags.component !== undefined ||
      flags.fromVersion !== undefined ||
      flags.toVersion !== undefined
    )
      throw new UsageError(
        '--lockfile-diff takes component and versions from the lockfiles; drop --component/--from-version/--to-version',
      );
    if (
      flags.lockfileFormat !== undefined &&
      !(LOCKFILE_FORMATS as readonly string[]).includes(flags.lockfileFormat)
    )
      throw new UsageError(`--lockfile-format must be one of ${LOCKFILE_FORMATS.join(', ')}`);
    const [oldFile, newFile] = flags.lockfileDiff as [string, string];
    const { changes } = diffLockfiles(
      oldFile,
      newFile,
      flags.lockfileFormat as LockfileFormat | undefined,
    );
    markers = changes.map((c) => ({
      ...common,
      kind: 'dependency',
      component: c.component,
      from_version: c.from,
      to_version: c.to,
      description: flags.description ?? describeChange(newFile, c),
    }));
  } else if (flags.kernel) {
    if (flags.kind !== undefined && flags.kind !== 'kernel')
      throw new UsageError('--kernel sends a kernel marker; drop --kind');
    if (flags.toVersion !== undefined)
      throw new UsageError('--kernel reads the new version from uname -r; drop --to-version');
    markers = [
      {
        ...common,
        // A kernel belongs to the machine: default to this host.
        hosts: hosts.length ? hosts : [machine.hostname],
        kind: 'kernel',
        component: flags.component ?? 'kernel',
        from_version: flags.fromVersion,
        to_version: machine.kernelRelease,
      },
    ];
  } else {
    if (!isOneOf(DEPLOY_KINDS, flags.kind))
      throw new UsageError(
        `--kind is required (${DEPLOY_KINDS.join(', ')}), or use --lockfile-diff OLD NEW or --kernel`,
      );
    markers = [
      {
        ...common,
        kind: flags.kind,
        component: flags.component,
        from_version: flags.fromVersion,
        to_version: flags.toVersion,
      },
    ];
  }

  for (const m of markers)
    if (!m.service && !(m.hosts && m.hosts.length))
      throw new UsageError(
        'a marker needs --service, --host, or both (which code or which machines changed)',
      );

  const runId = ci?.runId ?? randomUUID();
  return markers.map((m) => {
    // api.md's field order, absent fields dropped: what --dry-run prints is what is sent.
    const clean = Object.fromEntries(
      FIELD_ORDER.map((k) => [k, m[k]] as const).filter(
        ([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0),
      ),
    ) as Omit<MarkerBody, 'external_id'>;
    let external_id: string;
    if (flags.externalId !== undefined)
      external_id = markers.length > 1 ? `${flags.externalId}:${m.component}` : flags.externalId;
    else external_id = defaultExternalId(runId, clean);
    return { ...clean, external_id };
  });
}
