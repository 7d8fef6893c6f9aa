/**
 * bench/detect-scale/servers.ts: detection shared by 1, 2 and 3 server
 * processes on one embedded PostgreSQL (docs/scaling.md "N servers on one
 * PostgreSQL"), over the detect-scale fixture (100,000 series by default).
 *
 *   npm run bench:detect-servers [-- --series 100000 --servers 1,2,3 --rounds 1 --cache-mb 2560]
 *
 * The lease TTL is the default (30 s): with a short one, passes that keep a
 * loaded machine busy delay renewals past it, shards change hands between
 * the cold and the warm pass, and the warm pass is not warm.
 *
 * For each server count (interleaved when `--rounds` > 1, so ratios compare
 * runs under the same machine load): the detector states are cleared, N
 * servers start together just after a minute's scheduler tick and settle
 * their shard leases; then the next tick's scheduled passes, one per server
 * over its own shards, are the cold pass (every series new: its detector
 * built from its minutes), and after one more minute of data for every
 * series the following tick's passes are the warm pass (detectors in memory:
 * `--cache-mb` holds them all). A pass's time is the slowest server's (they
 * start at one tick; GET /api/v1/detect `last_on_this_server`), its wall
 * time from the first start to the last end. Printed and written to bench/results: wall times,
 * their ratio to one server in the same round, each server's owned series
 * (`shards.series_owned`, as /metrics onset_detection_series_owned), CPU
 * seconds of the servers and of PostgreSQL during each pass, and the load
 * average (the machine's 2 cores are shared). The ratios compare wall times
 * (the first server's pass start to the last one's end). Every run sees the
 * same data: the warm pass's extra minute is deleted after it.
 *
 * BENCH_COMPARE=<another checkout> runs that checkout's server too, on a
 * database of its own in the same PostgreSQL with the same fixture, each
 * server count alternating between the two builds (before/after numbers
 * under the same machine load).
 *
 * `--pin` pins each server process (every thread of it) to one core of its
 * own (server i on core i mod cores, `taskset`), PostgreSQL left free: a
 * model of servers on machines of their own with one core each, where the
 * unpinned runs measure N servers sharing this box's cores (a lone server's
 * pass already keeps both busy, so there a second one can add little).
 *
 * Profiling: BENCH_SERVER_NODE_ARGS adds node flags to the servers (e.g.
 * "--cpu-prof --cpu-prof-dir=/tmp/prof"); BENCH_PG_STATS=1 loads
 * pg_stat_statements and prints each pass's costliest statements.
 * Not part of npm test.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createPool, migrate, Partitions, utcDay } from '@onset/server/internals';
import {
  benchDatabase,
  postmasterPid,
  startServerProcess,
  writeResult,
  type ServerProcess,
} from '../lib/harness.ts';
import { postgresCpuSeconds, processCpuSeconds } from '../ingest/cpu.ts';
import { buildFixture } from './fixture.ts';

const { values: args } = parseArgs({
  options: {
    series: { type: 'string', default: '100000' },
    servers: { type: 'string', default: '1,2,3' },
    rounds: { type: 'string', default: '1' },
    points: { type: 'string', default: '5' },
    'cache-mb': { type: 'string', default: '2560' },
    shards: { type: 'string', default: '64' },
    pin: { type: 'boolean', default: false },
  },
});
const N_SERIES = Number(args.series);
const COUNTS = args.servers.split(',').map(Number);
const ROUNDS = Number(args.rounds);
const MIN = 60_000;
/** Scheduled runs start this long past each minute (detection/detect-options.ts MINUTE_LATENESS_MS). */
const TICK_MS = 20_000;
const NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const PG_STATS = process.env.BENCH_PG_STATS === '1';
const COMPARE = process.env.BENCH_COMPARE || undefined;

/** A build of the server and the database it runs on. */
interface Build {
  label: string;
  root?: string;
  url: string;
}

const log = (msg: string) => console.log(`bench/detect-servers: ${msg}`);
const secs = (ms: number) => Number((ms / 1000).toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => os.loadavg().map((x) => Number(x.toFixed(2)));

interface Pass {
  started_at: string;
  through: string;
  duration_ms: number;
  series: { total: number; new: number; fed: number };
  shards?: { count: number; run: number };
}

interface Status {
  running: unknown;
  last_on_this_server: Pass | null;
  shards: { owned: number[]; series_owned: number; servers: number } | null;
}

async function status(s: ServerProcess): Promise<Status> {
  return (await (await fetch(`${s.url}/api/v1/detect`)).json()) as Status;
}

/** Start N servers together, a few seconds after a minute's tick, so their leases settle before the next. */
async function startServers(url: string, n: number, root?: string): Promise<ServerProcess[]> {
  for (;;) {
    const inMinute = Date.now() % MIN;
    if (inMinute > TICK_MS + 2000 && inMinute < TICK_MS + 10_000) break;
    await sleep(250);
  }
  const servers = await Promise.all(
    Array.from({ length: n }, () =>
      startServerProcess(
        url,
        {
          ONSET_DETECT_CACHE_MB: args['cache-mb'],
          ONSET_DETECT_SHARDS: args.shards,
          ONSET_MAX_SERIES: '10000000',
          ONSET_MAX_SERIES_PER_SERVICE: '10000000',
        },
        { nodeArgs: NODE_ARGS, root },
      ),
    ),
  );
  if (args.pin)
    servers.forEach((s, i) =>
      execFileSync(
        'taskset',
        ['-a', '-p', '-c', String(i % os.cpus().length), String(s.proc.pid)],
        {
          stdio: 'ignore',
        },
      ),
    );
  for (let i = 0; i < 600; i++) {
    const ok = await Promise.all(
      servers.map((s) =>
        fetch(`${s.url}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    if (ok.every(Boolean)) return servers;
    await sleep(500);
  }
  throw new Error('servers did not become ready');
}

/** Wait until the servers' leases cover every series, each with a share. */
async function settled(servers: ServerProcess[]): Promise<number[]> {
  for (let i = 0; i < 240; i++) {
    const st = await Promise.all(servers.map(status));
    const owned = st.map((s) => s.shards?.series_owned ?? 0);
    if (
      owned.every((x) => x > 0) &&
      owned.reduce((a, b) => a + b, 0) === N_SERIES &&
      st.every((s) => s.shards?.servers === servers.length)
    )
      return owned;
    await sleep(250);
  }
  throw new Error('shard leases did not settle');
}

/** The passes every server starts after `afterMs` (the next tick's), once all are done. */
async function nextPasses(servers: ServerProcess[], afterMs: number): Promise<Pass[]> {
  for (;;) {
    const st = await Promise.all(servers.map(status));
    const done = st.map((s) =>
      s.last_on_this_server && Date.parse(s.last_on_this_server.started_at) >= afterMs
        ? s.last_on_this_server
        : null,
    );
    if (done.every((p) => p !== null)) return done as Pass[];
    await sleep(250);
  }
}

async function statsReset(url: string): Promise<void> {
  const pool = createPool(url, 1);
  await pool.query(`SELECT pg_stat_statements_reset()`);
  await pool.end();
}

/** The statements that cost PostgreSQL most during a pass (BENCH_PG_STATS=1). */
async function statsPrint(url: string, label: string): Promise<void> {
  const pool = createPool(url, 1);
  const { rows } = await pool.query<{ calls: number; ms: number; rows: number; q: string }>(
    `SELECT calls::int, round(total_exec_time)::float8 AS ms, rows::float8 AS rows,
            regexp_replace(left(query, 160), '\\s+', ' ', 'g') AS q
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
      ORDER BY total_exec_time DESC LIMIT 12`,
  );
  await pool.end();
  log(`${label}: costliest statements (pg_stat_statements)`);
  for (const r of rows) log(`  ${r.ms} ms  ${r.calls} calls  ${r.rows} rows  ${r.q}`);
}

function wall(passes: Pass[]): number {
  const start = Math.min(...passes.map((p) => Date.parse(p.started_at)));
  const end = Math.max(...passes.map((p) => Date.parse(p.started_at) + p.duration_ms));
  return end - start;
}

interface Measured {
  build: string;
  servers: number;
  round: number;
  series_owned: number[];
  cold: Record<string, unknown> & { slowest_s: number };
  warm: Record<string, unknown> & { slowest_s: number };
}

async function measure(
  build: Build,
  pmPid: number,
  n: number,
  round: number,
  partitions: Partitions,
): Promise<Measured> {
  const url = build.url;
  const pool = createPool(url, 2);
  await pool.query(
    `TRUNCATE regress_state, regression_members, regressions CASCADE; DELETE FROM detect_leases; DELETE FROM detect_members`,
  );
  await pool.end();
  const servers = await startServers(url, n, build.root);
  try {
    const owned = await settled(servers);
    log(`${build.label}: ${n} server(s): leases settled, series owned ${owned.join(' + ')}`);
    const cpu = () => ({
      server: servers.reduce((t, s) => t + processCpuSeconds(s.proc.pid!), 0),
      pg: postgresCpuSeconds(pmPid),
    });

    const phase = async (label: string, afterMs: number) => {
      if (PG_STATS) await statsReset(url);
      const c0 = cpu();
      const passes = await nextPasses(servers, afterMs);
      const c1 = cpu();
      if (PG_STATS) await statsPrint(url, `${build.label}: ${n} server(s), ${label} pass`);
      const w = wall(passes);
      const out = {
        // The slowest server's pass: when they start at one tick, the time until every shard is done.
        slowest_s: secs(Math.max(...passes.map((p) => p.duration_ms))),
        wall_s: secs(w),
        pass_s: passes.map((p) => secs(p.duration_ms)),
        series: passes.map((p) => p.series.total),
        fed: passes.map((p) => p.series.fed),
        // A cold pass sees every series new; fewer means a tick before the leases settled ran part of it.
        new: passes.map((p) => p.series.new),
        shards_run: passes.map((p) => p.shards?.run ?? null),
        // CPU from the start of waiting to the end (includes the wait before the tick: idle servers use little).
        server_cpu_s: Number((c1.server - c0.server).toFixed(2)),
        postgres_cpu_s: Number((c1.pg - c0.pg).toFixed(2)),
        loadavg: load(),
      };
      log(
        `${build.label}: ${n} server(s), ${label} pass: ${out.slowest_s} s (wall ${out.wall_s} s; per server ${out.pass_s.join(', ')} s; series ${out.series.join(' + ')}); ` +
          `CPU server ${out.server_cpu_s} s, PostgreSQL ${out.postgres_cpu_s} s; load ${out.loadavg.join(' ')}`,
      );
      if (label === 'cold' && out.new.reduce((a, b) => a + b, 0) !== N_SERIES)
        log(`warning: the cold passes found ${out.new.join(' + ')} new series, not ${N_SERIES}`);
      if (out.series.reduce((a, b) => a + b, 0) !== N_SERIES)
        log(
          `warning: the ${label} passes covered ${out.series.join(' + ')} series, not ${N_SERIES}`,
        );
      return { passes, out };
    };

    const cold = await phase('cold', Date.now());
    // One more minute for every series, just after the cold passes' horizon: the next tick feeds it.
    const through = Math.max(...cold.passes.map((p) => Date.parse(p.through)));
    const p2 = createPool(url, 2);
    await partitions.ensure('histograms', new Set([utcDay(through)]));
    await p2.query(
      `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
       SELECT i, 1 + i / 20, to_timestamp($2::float8 / 1000), 60, 60 * exp(b * ln(1.01 / 0.99)),
              exp((b - 3) * ln(1.01 / 0.99)), exp((b + 30) * ln(1.01 / 0.99)),
              ARRAY[b - 3, b - 1, b, b + 1, b + 3, b + 9, b + 30], ARRAY[5, 12, 16, 13, 8, 5, 1], true
         FROM generate_series(1, $1) i CROSS JOIN LATERAL (SELECT 350 + (i * 37) % 400 AS b) k`,
      [N_SERIES, through],
    );
    await p2.end();
    // Passes that start after the insert committed (one that began before it would find no new minute).
    const warm = await phase('warm', Date.now());
    // The next run sees the same data.
    const p3 = createPool(url, 2);
    await p3.query(`DELETE FROM histograms WHERE minute >= to_timestamp($1::float8 / 1000)`, [
      through,
    ]);
    await p3.end();
    return {
      build: build.label,
      servers: n,
      round,
      series_owned: owned,
      cold: cold.out,
      warm: warm.out,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

const { db, url, dataDir } = await benchDatabase(
  PG_STATS ? ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'] : [],
);
const results: Measured[] = [];
try {
  await migrate(url);
  const builds: Build[] = [{ label: 'this', url }];
  if (COMPARE) {
    await db.createDatabase('onset_compare');
    const other: Build = { label: 'compare', root: COMPARE, url: db.url('onset_compare') };
    // That build's own migrations: one of its servers, started and stopped.
    const s = await startServerProcess(other.url, {}, { root: COMPARE });
    for (
      let i = 0;
      i < 600 &&
      !(await fetch(`${s.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    )
      await sleep(500);
    await s.stop();
    builds.push(other);
  }
  if (PG_STATS)
    for (const b of builds) {
      const p = createPool(b.url, 1);
      await p.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
      await p.end();
    }
  const end = Math.floor(Date.now() / MIN) * MIN - MIN;
  let fixture: Record<string, number> = {};
  for (const b of builds)
    fixture = await buildFixture(b.url, N_SERIES, end, {
      points: Number(args.points),
      callsPerSeries: 0,
      log,
    });
  const pmPid = await postmasterPid(dataDir);
  const fixPools = builds.map((b) => createPool(b.url, 2));
  log(
    `load average before: ${load().join(' ')} (${os.cpus().length} cores)` +
      (args.pin ? '; each server pinned to a core of its own' : ''),
  );
  for (let round = 1; round <= ROUNDS; round++)
    for (const n of COUNTS)
      for (const [i, b] of builds.entries())
        results.push(await measure(b, pmPid, n, round, new Partitions(fixPools[i]!)));
  await Promise.all(fixPools.map((p) => p.end()));

  const ratio = (m: Measured, k: 'cold' | 'warm') => {
    const one = results.find((r) => r.round === m.round && r.servers === 1 && r.build === m.build);
    // Wall time: from the first server's pass start to the last one's end.
    return one ? Number((Number(m[k].wall_s) / Number(one[k].wall_s)).toFixed(3)) : null;
  };
  const rows = results.map((m) => ({
    ...m,
    cold_ratio_vs_1: ratio(m, 'cold'),
    warm_ratio_vs_1: ratio(m, 'warm'),
  }));
  console.table(
    Object.fromEntries(
      rows.map((r) => [
        `round ${r.round}, ${r.servers} server(s)${COMPARE ? `, ${r.build}` : ''}`,
        {
          'owned series': r.series_owned.join(' + '),
          'cold s': r.cold.wall_s,
          'cold ×1': r.cold_ratio_vs_1,
          'warm s': r.warm.wall_s,
          'warm ×1': r.warm_ratio_vs_1,
          'cold CPU srv/pg s': `${r.cold.server_cpu_s}/${r.cold.postgres_cpu_s}`,
          'warm CPU srv/pg s': `${r.warm.server_cpu_s}/${r.warm.postgres_cpu_s}`,
          load: `${(r.cold.loadavg as number[])[0]}/${(r.warm.loadavg as number[])[0]}`,
        },
      ]),
    ),
  );
  log(
    `wrote ${await writeResult(`detect-servers-${N_SERIES}${args.pin ? '-pinned' : ''}`, {
      series: N_SERIES,
      fixture,
      cache_mb: Number(args['cache-mb']),
      pinned: args.pin,
      shards: Number(args.shards),
      ...(COMPARE ? { compare: COMPARE } : {}),
      runs: rows,
    })}`,
  );
} finally {
  await db.stop();
}
