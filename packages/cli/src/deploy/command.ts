import os from 'node:os';
import { Command, Option } from 'commander';
import { DEPLOY_KINDS } from '@onset/contract';
import { buildMarkers, type DeployFlags, type MarkerBody } from './markers.ts';
import type { Deploy } from '@onset/contract';
import { clientOptions, postMarker } from './client.ts';
import { LOCKFILE_FORMATS } from '../lockfiles/index.ts';
import type { Io } from '../io.ts';
import {
  addVerdictOptions,
  VerdictExit,
  verdictRequest,
  verifyDeploys,
  type VerdictFlags,
} from '../verify/command.ts';

export type { Io } from '../io.ts';

interface CommandFlags extends DeployFlags, VerdictFlags {
  server?: string;
  token?: string;
  dryRun?: boolean;
  json?: boolean;
  verify?: boolean;
  retries: string;
  timeout: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function summary(
  m: Pick<Deploy, 'kind' | 'service' | 'hosts' | 'component' | 'from_version' | 'to_version'>,
): string {
  const what = [m.kind, m.component && m.component !== 'kernel' ? m.component : null]
    .filter(Boolean)
    .join(' ');
  const versions =
    m.from_version || m.to_version ? ` ${m.from_version ?? '∅'} → ${m.to_version ?? '∅'}` : '';
  const where = [
    m.service ? `service ${m.service}` : null,
    m.hosts?.length ? `hosts ${m.hosts.join(',')}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  return `${what}${versions} (${where})`;
}

async function runDeploy(flags: CommandFlags, io: Io): Promise<void> {
  const client = clientOptions(flags, io);
  if (flags.verify) verdictRequest(flags); // bad --wait etc. exit before a marker is sent
  const markers: MarkerBody[] = buildMarkers(flags, {
    now: Date.now(),
    hostname: os.hostname(),
    kernelRelease: os.release(),
    env: io.env,
  });

  if (markers.length === 0) {
    io.err(
      `onset: no dependency changes between ${flags.lockfileDiff?.join(' and ')}; nothing to send`,
    );
    if (flags.json || flags.dryRun) io.out('[]');
    return;
  }
  if (flags.dryRun) {
    io.err(
      `onset: dry run: would POST ${markers.length} marker(s) to ${new URL('/api/v1/deploys', client.server)}`,
    );
    io.out(JSON.stringify(markers, null, 2));
    return;
  }

  const stored: Deploy[] = [];
  const failures: string[] = [];
  for (const body of markers) {
    try {
      const { marker, replayed } = await postMarker(body, client);
      stored.push(marker);
      io.err(
        `onset: ${replayed ? 'already recorded as' : 'recorded'} marker ${marker.id}: ${summary(marker)}`,
      );
    } catch (err) {
      // Keep going: one refused marker (say, an over-long name) must not drop the rest of a lockfile diff.
      const label = body.component ? `${body.kind} ${body.component}` : body.kind;
      failures.push(`${label}: ${(err as Error).message}`);
      io.err(`onset: ${label}: ${(err as Error).message}`);
    }
  }
  if (failures.length) {
    if (flags.json) io.out(JSON.stringify(stored, null, 2));
    throw new SendError(`${failures.length} of ${markers.length} marker(s) not recorded`);
  }
  if (!flags.verify) {
    if (flags.json) io.out(JSON.stringify(stored, null, 2));
    return;
  }
  // --verify: the gate's answer is the verdicts (with --json, the verdicts are what is printed).
  const code = await verifyDeploys(
    stored.map((m) => m.id),
    flags,
    client,
    io,
  );
  if (code !== 0) throw new VerdictExit(code);
}

/** Some markers did not reach the server (refused, or retries ran out). */
export class SendError extends Error {}

export function deployCommand(io: Io): Command {
  const cmd = new Command('deploy')
    .description(
      'record a deploy marker (code, dependency, kernel, config or infra change) in Onset',
    )
    .addOption(
      new Option(
        '--server <url>',
        'Onset server URL (env ONSET_URL, default http://127.0.0.1:8080)',
      ),
    )
    .addOption(
      new Option('--token <token>', 'bearer token with the deploys scope (env ONSET_TOKEN)'),
    )
    .option('-s, --service <name>', 'service deployed')
    .option(
      '-e, --environment <name>',
      'environment, e.g. prod (default from GitLab CI_ENVIRONMENT_NAME)',
    )
    .option('--host <name>', 'host concerned; repeat or comma-separate for several', collect)
    .addOption(new Option('-k, --kind <kind>', 'what changed').choices([...DEPLOY_KINDS]))
    .option('--component <name>', 'what part changed, e.g. a dependency name')
    .option('--from-version <version>', 'version before')
    .option('--to-version <version>', 'version after')
    .option('--commit <sha>', 'commit deployed (default from the CI environment)')
    .option(
      '--url <link>',
      'http(s) link to the CI run or change (default from the CI environment)',
    )
    .option('-m, --description <text>', 'free text shown with the marker')
    .option('--at <time>', 'RFC 3339 time of the deploy (default now)')
    .option(
      '--external-id <id>',
      'idempotency key (default: derived from the CI run and the marker)',
    )
    .option(
      '--lockfile-diff <files...>',
      'OLD NEW lockfiles (package-lock.json, Cargo.lock, go.sum, poetry.lock, requirements.txt): one dependency marker per changed package',
    )
    .addOption(
      new Option(
        '--lockfile-format <format>',
        'lockfile format when the names do not tell',
      ).choices([...LOCKFILE_FORMATS]),
    )
    .option(
      '--kernel',
      'kernel marker for this host: to_version from uname -r, hosts default to this hostname',
    )
    .option('--no-ci', 'ignore CI environment variables')
    .option('--dry-run', 'print the markers as JSON instead of sending them')
    .option('--json', 'print the stored markers as JSON')
    .option(
      '--verify',
      "then wait for the deploy's verdict, exit as `onset deploy verify` does (the token needs the read scope too)",
    );
  return addVerdictOptions(cmd)
    .option('--retries <n>', 'retries on 429/5xx/network errors', '5')
    .option('--timeout <ms>', 'per-request timeout in ms', '10000')
    .action(async (flags: CommandFlags) => runDeploy(flags, io));
}
