/**
 * `onset deploy verify`: the CI gate. Waits for a deploy's verdict and exits
 * 0 pass, 1 fail, 2 inconclusive (or as --inconclusive maps it), 3 when
 * there is no verdict to give (still pending when --wait ran out, no such
 * marker, the server refused or stayed unreachable, bad flags).
 */
import { Command, Option } from 'commander';
import {
  DEPLOY_KINDS,
  isOneOf,
  parseDuration,
  type Verdict,
  type VerdictOutcome,
} from '@onset/contract';
import { clientOptions, type ClientOptions } from '../deploy/client.ts';
import { UsageError } from '../deploy/markers.ts';
import type { Io } from '../io.ts';
import { awaitVerdict, findMarker, type MarkerMatch, type Thresholds } from './fetch.ts';
import { verdictTable } from './table.ts';

/** Exit codes of a verdict gate (docs/deploy-markers.md "onset deploy verify"). */
export const VERDICT_EXIT = { pass: 0, fail: 1, inconclusive: 2, none: 3 } as const;

/** The command ends with this exit code (a verdict that is not a pass, or none). */
export class VerdictExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/** The flags every verdict wait takes (`deploy verify` and `deploy --verify`). */
export interface VerdictFlags {
  wait: string;
  inconclusive: 'pass' | 'fail' | 'inconclusive';
  window?: string;
  p50Ratio?: string;
  p99Ratio?: string;
  minCount?: string;
}

interface VerifyFlags extends VerdictFlags, MarkerMatch {
  server?: string;
  token?: string;
  deploy?: string;
  json?: boolean;
  retries: string;
  timeout: string;
}

function positive(flag: string, raw: string | undefined, integer: boolean): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UsageError(`${flag} must be a ${integer ? 'whole ' : ''}number > 0 (got "${raw}")`);
  return n;
}

function duration(flag: string, raw: string): number {
  try {
    return parseDuration(raw);
  } catch {
    throw new UsageError(`${flag} must be a duration like 90s, 15m or 1h (got "${raw}")`);
  }
}

/** The wait and the thresholds from the flags, checked before anything is sent. */
export function verdictRequest(flags: VerdictFlags): { waitMs: number; thresholds: Thresholds } {
  const waitMs = duration('--wait', flags.wait);
  if (flags.window !== undefined) duration('--window', flags.window);
  return {
    waitMs,
    thresholds: {
      window: flags.window,
      p50_ratio: positive('--p50-ratio', flags.p50Ratio, false),
      p99_ratio: positive('--p99-ratio', flags.p99Ratio, false),
      min_count: positive('--min-count', flags.minCount, true),
    },
  };
}

/** The exit code of one verdict, --inconclusive applied. */
export function exitCodeOf(outcome: VerdictOutcome, inconclusive: VerdictFlags['inconclusive']) {
  if (outcome === 'pending') return VERDICT_EXIT.none;
  if (outcome === 'inconclusive') return VERDICT_EXIT[inconclusive];
  return VERDICT_EXIT[outcome];
}

/**
 * Wait for each deploy's verdict, print it (a table, or JSON), and return
 * the gate's exit code: any fail → 1, else anything undecided → 3, else any
 * inconclusive → 2 (as mapped), else 0.
 */
export async function verifyDeploys(
  ids: string[],
  flags: VerdictFlags & { json?: boolean },
  client: ClientOptions,
  io: Io,
): Promise<number> {
  const { waitMs, thresholds } = verdictRequest(flags);
  const verdicts: Verdict[] = [];
  for (const id of ids) {
    const v = await awaitVerdict(id, thresholds, waitMs, client, (p, left) =>
      io.err(
        `onset: deploy ${id}: verdict pending (judged window ends ${p.windows.candidate.to}); waiting up to ${Math.ceil(left / 1000)} s`,
      ),
    );
    verdicts.push(v);
    if (!flags.json) {
      for (const line of verdictTable(v)) io.out(line);
      if (ids.length > 1) io.out('');
    }
    if (v.verdict === 'pending')
      io.err(`onset: deploy ${id}: still pending after --wait ${flags.wait}; no verdict yet`);
  }
  if (flags.json) io.out(JSON.stringify(ids.length === 1 ? verdicts[0] : verdicts, null, 2));
  const codes = verdicts.map((v) => exitCodeOf(v.verdict, flags.inconclusive));
  if (codes.includes(VERDICT_EXIT.fail)) return VERDICT_EXIT.fail;
  if (codes.includes(VERDICT_EXIT.none)) return VERDICT_EXIT.none;
  if (codes.includes(VERDICT_EXIT.inconclusive)) return VERDICT_EXIT.inconclusive;
  return VERDICT_EXIT.pass;
}

/** The verdict options, shared by `deploy verify` and `deploy --verify`. */
export function addVerdictOptions(cmd: Command): Command {
  return cmd
    .option(
      '--wait <duration>',
      'how long to wait for the verdict, e.g. 15m; 0s asks once (pending then exits 3)',
      '15m',
    )
    .addOption(
      new Option('--inconclusive <exit>', 'what an inconclusive verdict exits as')
        .choices(['pass', 'fail', 'inconclusive'])
        .default('inconclusive'),
    )
    .option('--window <duration>', 'judged window after the marker (1m to 2h; server default 10m)')
    .option('--p50-ratio <x>', 'smallest p50 ratio that fails (server default 1.1)')
    .option('--p99-ratio <x>', 'smallest p99 ratio that fails (server default 1.2)')
    .option('--min-count <n>', 'calls each side needs, fewer is inconclusive (default 300)');
}

async function runVerify(flags: VerifyFlags, io: Io): Promise<void> {
  const client = clientOptions(flags, io);
  verdictRequest(flags); // bad flags exit before anything is asked
  let id = flags.deploy;
  if (id !== undefined && !/^[0-9]{1,18}$/.test(id))
    throw new UsageError(`--deploy must be a marker id (digits), got "${id}"`);
  if (id === undefined) {
    // --kind's choices are the contract's kinds (commander refuses any other).
    if (flags.kind !== undefined && !isOneOf(DEPLOY_KINDS, flags.kind))
      throw new UsageError(`--kind must be one of ${DEPLOY_KINDS.join(', ')}, got "${flags.kind}"`);
    const match: MarkerMatch = {
      service: flags.service,
      environment: flags.environment,
      kind: flags.kind,
      toVersion: flags.toVersion,
      commit: flags.commit,
      externalId: flags.externalId,
    };
    if (!Object.values(match).some(Boolean))
      throw new UsageError(
        'say which deploy: --deploy ID, or the marker fields (--service, --environment, --to-version, --commit, --external-id)',
      );
    const m = await findMarker(match, client);
    io.err(`onset: verifying deploy ${m.id} (${m.service ?? m.hosts.join(',')} at ${m.at})`);
    id = m.id;
  }
  const code = await verifyDeploys([id], flags, client, io);
  if (code !== 0) throw new VerdictExit(code);
}

export function verifyCommand(io: Io): Command {
  const cmd = new Command('verify')
    .description(
      "wait for a deploy's verdict and exit 0 pass, 1 fail, 2 inconclusive, 3 no verdict",
    )
    .addOption(
      new Option(
        '--server <url>',
        'Onset server URL (env ONSET_URL, default http://127.0.0.1:8080)',
      ),
    )
    .addOption(new Option('--token <token>', 'bearer token with the read scope (env ONSET_TOKEN)'))
    .option('--deploy <id>', 'the marker id (POST /api/v1/deploys answered it)')
    .option('-s, --service <name>', 'without --deploy: the newest marker of this service')
    .option('-e, --environment <name>', 'without --deploy: … in this environment')
    .addOption(
      new Option('-k, --kind <kind>', 'without --deploy: … of this kind').choices([
        ...DEPLOY_KINDS,
      ]),
    )
    .option('--to-version <version>', 'without --deploy: … with this to_version')
    .option('--commit <sha>', 'without --deploy: … of this commit (a prefix will do)')
    .option('--external-id <id>', 'without --deploy: … with this external_id')
    .option('--json', 'print the verdict as JSON (the API answer) instead of a table');
  return addVerdictOptions(cmd)
    .option('--retries <n>', 'retries on 429/5xx/network errors', '5')
    .option('--timeout <ms>', 'per-request timeout in ms, on top of the wait', '10000')
    .action(async (flags: VerifyFlags) => runVerify(flags, io));
}
