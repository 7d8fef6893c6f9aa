/**
 * npm run eval:fleet [-- --seeds 1,2,3 --size full|small --step 3 --rate 1 --quiet]
 *
 * A fleet replay through the real server on embedded PostgreSQL: for each
 * seed, a fresh database holds a whole generated fleet (fleet.ts: ≥ 50
 * services, ≥ 200 hosts, the five incident kinds several times each,
 * rollouts, noise), replayed in data-time order with backdated timestamps
 * (replay.ts), then scored against the generator's ground truth (score.ts).
 * Prints the numbers and writes bench/results/eval-fleet-<seed>.json. It
 * never fails on bad numbers: it measures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchDatabase, ROOT, writeResult } from '../lib/harness.ts';
import { Fleet, FULL_FLEET, SMALL_FLEET } from './fleet.ts';
import { replay } from './replay.ts';
import { formatScore, scoreFleet, type FleetScore } from './score.ts';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1' },
    seed: { type: 'string' },
    size: { type: 'string', default: 'full' },
    services: { type: 'string' },
    hosts: { type: 'string' },
    'per-kind': { type: 'string' },
    step: { type: 'string', default: '3' },
    rate: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});

const base = args.size === 'small' ? SMALL_FLEET : FULL_FLEET;
const size = {
  ...base,
  ...(args.services ? { services: Number(args.services) } : {}),
  ...(args.hosts ? { hosts: Number(args.hosts) } : {}),
  ...(args['per-kind'] ? { perKind: Number(args['per-kind']) } : {}),
  ...(args.rate ? { rate: Number(args.rate) } : {}),
};
const seeds = (args.seed ?? args.seeds!).split(',').map(Number);
const stepMin = Number(args.step);
const log = (s: string) => {
  if (!args.quiet) process.stderr.write(s + '\n');
};

/** The server in its own process (bench/eval-fleet/server.ts: no scheduler). */
async function startServer(
  databaseUrl: string,
): Promise<{ apiUrl: string; otlpUrl: string; proc: ChildProcess }> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench/eval-fleet/server.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        ONSET_LOG_LEVEL: 'warn',
        OTEL_SDK_DISABLED: 'true',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    proc.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /onset-ready (\S+) (\S+)/.exec(out);
      if (m) resolve({ apiUrl: m[1]!, otlpUrl: m[2]!, proc });
    });
  });
}

const { db } = await benchDatabase();
const summary: { seed: number; score: FleetScore; seconds: number }[] = [];
try {
  for (const seed of seeds) {
    const dbName = `fleet_${seed}`;
    await db.createDatabase(dbName);
    const server = await startServer(db.url(dbName));
    try {
      const fleet = new Fleet({ seed, ...size, endMs: Date.now() - 2 * 60_000 });
      const hostsUsed = new Set(fleet.services.flatMap((s) => s.hosts)).size;
      log(
        `seed ${seed}: ${fleet.services.length} services on ${hostsUsed} hosts, ${fleet.services.reduce((a, s) => a + s.series.length, 0)} series + ${fleet.edges.length} edges, ${fleet.incidents.length} incidents, ${fleet.markers.length} markers, ${fleet.dataMinutes} data minutes, a pass every ${stepMin}`,
      );
      const result = await replay(
        fleet,
        { apiUrl: server.apiUrl, otlpUrl: server.otlpUrl },
        { stepMin, log },
      );
      const score = scoreFleet(fleet, result);
      process.stdout.write(formatScore(seed, score, !args.quiet) + '\n');
      process.stdout.write(
        `  replay: ${result.export.spans} spans (${result.export.rejected} rejected) in ${result.export.requests} requests, ${result.passes} passes; ${result.seconds.total.toFixed(0)} s (generate ${result.seconds.generate.toFixed(0)}, export ${result.seconds.export.toFixed(0)}, detect+list ${result.seconds.detect.toFixed(0)})\n`,
      );
      summary.push({ seed, score, seconds: result.seconds.total });
      const file = await writeResult(`eval-fleet-${seed}`, {
        params: {
          seed,
          ...size,
          stepMin,
          services: fleet.services.length,
          hosts: hostsUsed,
          series: fleet.services.reduce((a, s) => a + s.series.length, 0),
          edges: fleet.edges.length,
          markers: fleet.markers.length,
          dataMinutes: fleet.dataMinutes,
        },
        replay: {
          spans: result.export.spans,
          rejected: result.export.rejected,
          requests: result.export.requests,
          passes: result.passes,
          seconds: result.seconds,
        },
        score,
      });
      log(`wrote ${path.relative(process.cwd(), file)}`);
    } finally {
      await new Promise<void>((resolve) => {
        server.proc.removeAllListeners('exit');
        server.proc.once('exit', () => resolve());
        server.proc.kill('SIGTERM');
      });
    }
  }
} finally {
  await db.stop();
}

if (summary.length > 1) {
  process.stdout.write(
    '\nseed  once  more  missed  spurious/svc-day  no-change spurious  top-1  cohort(confined)  median min  seconds\n',
  );
  for (const { seed, score: s, seconds } of summary)
    process.stdout.write(
      `${String(seed).padEnd(6)}${`${s.found_once}/${s.incidents}`.padEnd(6)}${String(s.found_more).padEnd(6)}${String(s.missed).padEnd(8)}${s.spurious_per_service_day.toFixed(2).padEnd(18)}${String(s.spurious_no_change).padEnd(20)}${`${s.top1_right}/${s.top1_of}`.padEnd(7)}${`${s.cohort_confined_right}/${s.cohort_confined_of}`.padEnd(18)}${String(s.detect_minutes.median ?? '-').padEnd(12)}${seconds.toFixed(0)}\n`,
    );
}
