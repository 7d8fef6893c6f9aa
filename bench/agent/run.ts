/**
 * Agent overhead: a workload doing ~1,000 fsyncs/s and ~200 spawns/s, run
 * without the agent and with the agent tracing it through bpftrace, as it
 * runs by default and with the opt-in unmount probe on every system call
 * (--unmount-next-syscall), interleaved in one run (without, default, without,
 * next-syscall; per round) to even out a noisy machine. Reports the agent's
 * CPU (% of one core, node + bpftrace, in a warm-up window, in steady state
 * after it and overall), its memory per process (Rss, Pss, Private,
 * anonymous, shared file-backed, from /proc/PID/smaps_rollup), how many spans
 * it delivered, and for each variant the workload's own slowdown (time spent
 * inside its fsync and spawn calls, each traced run against the baseline run
 * just before it), with the load average at start and end.
 *
 *   npm run bench:agent   (root; BENCH_SECONDS=8, BENCH_WARMUP_SECONDS=5, BENCH_ROUNDS=3,
 *                          BENCH_NEXT_SYSCALL=0 to leave the next-syscall variant out)
 *
 * The fsyncs go to a file on /dev/shm so 1,000/s is reachable on any disk;
 * the syscalls are traced all the same, and with no disk time to hide behind
 * the relative slowdown is a worst case. The spans go to a loopback sink that
 * answers 200, so Onset's own ingest cost does not blur the agent's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ROOT, writeResult } from '../lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/**
 * The workload runs this much longer, first: the agent's own start-up transient (V8 compiling
 * its hot paths, bpftrace's first prints) falls in it. CPU is reported for this window, for the
 * SECONDS after it (steady state, compared with the bar: the agent runs for days) and for both.
 */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const FSYNC_RATE = 1000;
const SPAWN_RATE = 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Agent variants, each run once per round after its own baseline run. */
const VARIANTS = [
  { name: 'default', flags: [] as string[] },
  ...(process.env.BENCH_NEXT_SYSCALL === '0'
    ? []
    : [{ name: 'next-syscall', flags: ['--unmount-next-syscall'] }]),
];
const WORK_DIR = '/dev/shm/onset-bench-agent';
const BARS = { cpuPctOfCore: 5, rssMb: 150, slowdownPct: 10 };
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

interface WorkloadResult {
  fsyncs: number;
  fsync_ns: number;
  fsync_p50_ns: number;
  spawns: number;
  spawn_ns: number;
  spawn_p50_ns: number;
  /** CPU time of the workload and its spawned children over the run (user + system). */
  cpu_ns: number;
  wall_s: number;
}

function runWorkload(seconds = WARMUP_SECONDS + SECONDS): Promise<WorkloadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'python3',
      [
        path.join(ROOT, 'bench/agent/workload.py'),
        String(seconds),
        String(FSYNC_RATE),
        String(SPAWN_RATE),
        WORK_DIR,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as WorkloadResult)
        : reject(new Error(`workload exited ${code}`)),
    );
  });
}

/** Memory of a process in MB, from /proc/PID/smaps_rollup. */
interface MemSample {
  /** Resident set size: every resident page mapped, shared ones counted in full. */
  rss: number;
  /** Proportional set size: each shared page divided by the number of processes mapping it. */
  pss: number;
  /** Pages only this process maps (Private_Clean + Private_Dirty). */
  private: number;
  /** Anonymous memory (heap, stacks; not file-backed). */
  anon: number;
  /** File-backed pages shared with other processes (library text and data). */
  sharedFile: number;
}

/** CPU ticks (user + system) and memory of a process. */
function procSample(pid: number): { ticks: number; mem: MemSample } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key: string) =>
      Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) / 1024;
    return {
      ticks: Number(f[11]) + Number(f[12]),
      mem: {
        rss: kb('Rss'),
        pss: kb('Pss'),
        private: kb('Private_Clean') + kb('Private_Dirty'),
        anon: kb('Anonymous'),
        sharedFile: kb('Shared_Clean') + kb('Shared_Dirty'),
      },
    };
  } catch {
    return undefined;
  }
}

const MEM_KEYS = ['rss', 'pss', 'private', 'anon', 'sharedFile'] as const;
const zeroMem = (): MemSample => ({ rss: 0, pss: 0, private: 0, anon: 0, sharedFile: 0 });
/** Per key, the larger of the two. */
function maxMem(a: MemSample, b: MemSample): MemSample {
  const out = zeroMem();
  for (const k of MEM_KEYS) out[k] = Math.max(a[k], b[k]);
  return out;
}
function sumMem(a: MemSample, b: MemSample): MemSample {
  const out = zeroMem();
  for (const k of MEM_KEYS) out[k] = a[k] + b[k];
  return out;
}

function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      kids.push(
        ...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
          .split(' ')
          .filter(Boolean)
          .map(Number),
      );
    } catch {
      /* thread gone */
    }
  }
  return kids;
}

async function startSink(): Promise<{
  url: string;
  requests: () => number;
  bytes: () => number;
  close: () => Promise<void>;
}> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (d: Buffer) => (bytes += d.length));
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    bytes: () => bytes,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

interface CpuWindow {
  seconds: number;
  node: number;
  bpftrace: number;
  total: number;
}

interface AgentRun {
  workload: WorkloadResult;
  /** % of one core: the warm-up window, the steady window after it, and the whole run. */
  cpu: { warmup: CpuWindow; steady: CpuWindow; whole: CpuWindow };
  /** The agent's own account at exit (process.memoryUsage(), process.cpuUsage()). */
  selfReport?: string;
  /** Peaks over the run, per process and of the two together (each key on its own). */
  mem: { node: MemSample; bpftrace: MemSample; total: MemSample };
  spansDelivered: number;
  lostEvents: boolean;
}

async function runWithAgent(sinkUrl: string, extraFlags: string[] = []): Promise<AgentRun> {
  // BENCH_AGENT_NODE_FLAGS: extra node flags; BENCH_AGENT_ENTRY: another entry point (e.g.
  // "--import tsx old/apps/agent/src/main.ts" to measure an older version the same way).
  const nodeFlags = (process.env.BENCH_AGENT_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const entry = (process.env.BENCH_AGENT_ENTRY ?? path.join(ROOT, 'apps/agent/bin/onset-agent.js'))
    .split(' ')
    .filter(Boolean);
  const agent = spawn(
    process.execPath,
    [
      ...nodeFlags,
      ...entry,
      '--endpoint',
      sinkUrl,
      '--comm',
      'onset-bench',
      '--no-probes',
      '--no-strace',
      '--service-name',
      'bench-agent',
      ...extraFlags,
    ],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'pipe'] },
  );
  let log = '';
  agent.stderr!.on('data', (d) => (log += d));
  const deadline = Date.now() + 120_000;
  while (!/running with/.test(log)) {
    if (agent.exitCode !== null || Date.now() > deadline)
      throw new Error(`agent did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!/running with bpftrace/.test(log))
    throw new Error(`agent is not using bpftrace (run as root with bpftrace installed):\n${log}`);
  const bpftracePid = childrenOf(agent.pid!).find(
    (p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'bpftrace',
  )!;

  const before = { node: procSample(agent.pid!)!, bpftrace: procSample(bpftracePid)! };
  const t0 = Date.now();
  const mem = {
    node: before.node.mem,
    bpftrace: before.bpftrace.mem,
    total: sumMem(before.node.mem, before.bpftrace.mem),
  };
  const sampler = setInterval(() => {
    const n = procSample(agent.pid!);
    const b = procSample(bpftracePid);
    if (!n || !b) return;
    mem.node = maxMem(mem.node, n.mem);
    mem.bpftrace = maxMem(mem.bpftrace, b.mem);
    mem.total = maxMem(mem.total, sumMem(n.mem, b.mem));
  }, 250);
  const running = runWorkload();
  await new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000));
  const warm = { node: procSample(agent.pid!)!, bpftrace: procSample(bpftracePid)! };
  const t1 = Date.now();
  const workload = await running;
  // Give the agent the time to read and send the tail, and count that CPU too.
  await new Promise((r) => setTimeout(r, 2_000));
  clearInterval(sampler);
  const after = { node: procSample(agent.pid!)!, bpftrace: procSample(bpftracePid)! };
  const t2 = Date.now();
  type Sample = { node: { ticks: number }; bpftrace: { ticks: number } };
  const window = (a: Sample, b: Sample, ms: number): CpuWindow => {
    const pct = (x: { ticks: number }, y: { ticks: number }) =>
      ms >= 1000 ? ((y.ticks - x.ticks) / CLK_TCK / (ms / 1000)) * 100 : 0;
    const node = pct(a.node, b.node);
    const bpftrace = pct(a.bpftrace, b.bpftrace);
    return { seconds: ms / 1000, node, bpftrace, total: node + bpftrace };
  };

  await new Promise<void>((resolve) => {
    agent.once('exit', () => resolve());
    agent.kill('SIGTERM');
  });
  const delivered = Number(
    /flushed; (\d+) spans delivered/.exec(log)?.[1] ??
      /(\d+) spans undelivered/.exec(log)?.[1] ??
      0,
  );
  return {
    workload,
    cpu: {
      warmup: window(before, warm, t1 - t0),
      steady: window(warm, after, t2 - t1),
      whole: window(before, after, t2 - t0),
    },
    selfReport: /process: (.*)/.exec(log)?.[1],
    mem,
    spansDelivered: delivered,
    lostEvents: /dropped \d+ events|did not reach the agent/.test(log),
  };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Time the workload spends in its fsync and spawn calls per second, from its medians. */
const busyPerS = (r: WorkloadResult) =>
  (r.fsync_p50_ns / 1e3) * FSYNC_RATE + (r.spawn_p50_ns / 1e3) * SPAWN_RATE;

const busyFromUs = (p: { fsyncUs: number; spawnUs: number }) =>
  p.fsyncUs * FSYNC_RATE + p.spawnUs * SPAWN_RATE;

/** Medians per operation, and the median over rounds: other load on the machine shows up as outliers that means would pick up. */
const perOp = (rs: WorkloadResult[]) => ({
  fsyncUs: median(rs.map((r) => r.fsync_p50_ns / 1e3)),
  spawnUs: median(rs.map((r) => r.spawn_p50_ns / 1e3)),
  fsyncMeanUs: median(rs.map((r) => r.fsync_ns / r.fsyncs / 1e3)),
  spawnMeanUs: median(rs.map((r) => r.spawn_ns / r.spawns / 1e3)),
});

/** One variant's slowdown: each traced run against the baseline run just before it. */
function slowdownOf(baseline: WorkloadResult[], traced: WorkloadResult[]) {
  const base = perOp(baseline);
  const withAgent = perOp(traced);
  const paired = (f: (r: WorkloadResult) => number) =>
    median(traced.map((t, i) => (f(t) / f(baseline[i]!) - 1) * 100));
  return {
    without: base,
    with: withAgent,
    fsyncPct: (withAgent.fsyncUs / base.fsyncUs - 1) * 100,
    spawnPct: (withAgent.spawnUs / base.spawnUs - 1) * 100,
    // Medians taken over all rounds apart.
    totalPct: (busyFromUs(withAgent) / busyFromUs(base) - 1) * 100,
    // Compared with the bar: each traced run against the baseline run just before it (same load
    // on this shared machine, which moves the spawn times by 2x between minutes), then the median.
    pairedPct: paired(busyPerS),
    pairedSpawnPct: paired((r) => r.spawn_p50_ns),
    // CPU time per operation (the tracing inside its system calls), which other load on the
    // machine moves much less than wall times.
    pairedCpuPct: paired((r) => r.cpu_ns / (r.spawns + r.fsyncs)),
    perRound: traced.map((t, i) => ({
      withoutUs: {
        fsyncP50: baseline[i]!.fsync_p50_ns / 1e3,
        spawnP50: baseline[i]!.spawn_p50_ns / 1e3,
      },
      withUs: { fsyncP50: t.fsync_p50_ns / 1e3, spawnP50: t.spawn_p50_ns / 1e3 },
    })),
  };
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('run as root: the agent traces through bpftrace');
  const sink = await startSink();
  const loadAtStart = loadAverage();
  const runs = VARIANTS.map(() => ({ baseline: [] as WorkloadResult[], traced: [] as AgentRun[] }));
  try {
    for (let i = 0; i < ROUNDS; i++) {
      process.stdout.write(`round ${i + 1}/${ROUNDS}:`);
      for (const [v, variant] of VARIANTS.entries()) {
        process.stdout.write(' without agent… ');
        runs[v]!.baseline.push(await runWorkload());
        process.stdout.write(`with agent (${variant.name})… `);
        runs[v]!.traced.push(await runWithAgent(sink.url, variant.flags));
      }
      process.stdout.write('done\n');
    }
  } finally {
    await sink.close();
    rmSync(WORK_DIR, { recursive: true, force: true });
  }
  const loadAtEnd = loadAverage();

  const variants = Object.fromEntries(
    VARIANTS.map((variant, v) => [
      variant.name,
      {
        flags: variant.flags,
        slowdown: slowdownOf(
          runs[v]!.baseline,
          runs[v]!.traced.map((t) => t.workload),
        ),
      },
    ]),
  );
  // CPU, memory and spans: the agent as it runs by default.
  const traced = runs[0]!.traced;
  const slowdown = variants.default!.slowdown;
  const base = slowdown.without;
  const withAgent = slowdown.with;
  const peakOf = (pick: (t: AgentRun) => MemSample) => traced.map(pick).reduce(maxMem, zeroMem());
  const memory = {
    node: peakOf((t) => t.mem.node),
    bpftrace: peakOf((t) => t.mem.bpftrace),
    total: peakOf((t) => t.mem.total),
  };
  const cpuOf = (w: 'warmup' | 'steady' | 'whole') => ({
    node: mean(traced.map((t) => t.cpu[w].node)),
    bpftrace: mean(traced.map((t) => t.cpu[w].bpftrace)),
    total: mean(traced.map((t) => t.cpu[w].total)),
  });
  const cpu = { warmup: cpuOf('warmup'), steady: cpuOf('steady'), whole: cpuOf('whole') };
  const agent = {
    // Compared with the bar: steady state, node + bpftrace, mean over rounds.
    cpuPctOfCore: cpu.steady.total,
    nodeCpuPct: cpu.steady.node,
    bpftraceCpuPct: cpu.steady.bpftrace,
    cpu,
    // Compared with the bar: RSS of node + bpftrace, the conservative figure (shared library
    // pages counted in full, as `ps` and container limits see them).
    rssMbPeak: memory.total.rss,
    rssMbNode: memory.node.rss,
    rssMbBpftrace: memory.bpftrace.rss,
    /** Peak MB per process and in total: rss, pss, private, anon, sharedFile (see MemSample). */
    memory,
    selfReports: traced.map((t) => t.selfReport),
  };
  const expected = traced.map((t) => t.workload.fsyncs + t.workload.spawns);
  const delivered = traced.map((t) => t.spansDelivered);
  const pass = {
    cpu: agent.cpuPctOfCore < BARS.cpuPctOfCore,
    rss: agent.rssMbPeak < BARS.rssMb,
    slowdown: slowdown.pairedPct < BARS.slowdownPct,
  };

  console.log(
    `\nworkload: ${FSYNC_RATE} fsyncs/s + ${SPAWN_RATE} spawns/s for ${WARMUP_SECONDS}+${SECONDS}s, ${ROUNDS} rounds; load average ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end`,
  );
  console.log(
    'workload slowdown per agent variant (each run against the baseline run just before it, median over rounds):',
  );
  for (const [name, v] of Object.entries(variants))
    console.log(
      `  ${name.padEnd(13)} time in fsync+spawn calls ${round(v.slowdown.pairedPct)}%, spawn p50 ${round(v.slowdown.pairedSpawnPct)}%, CPU per operation ${round(v.slowdown.pairedCpuPct)}% (rounds: ${v.slowdown.perRound.map((r) => `${round(r.withoutUs.spawnP50, 0)}→${round(r.withUs.spawnP50, 0)} µs`).join(', ')})${v.flags.length ? ` [${v.flags.join(' ')}]` : ''}`,
    );
  console.log('the default agent:');
  console.log(
    `  fsync p50    ${round(base.fsyncUs)} µs without agent, ${round(withAgent.fsyncUs)} µs with (+${round(withAgent.fsyncUs - base.fsyncUs)} µs; means ${round(base.fsyncMeanUs)} / ${round(withAgent.fsyncMeanUs)} µs)`,
  );
  console.log(
    `  spawn p50    ${round(base.spawnUs)} µs without agent, ${round(withAgent.spawnUs)} µs with (${round(slowdown.spawnPct)}%; means ${round(base.spawnMeanUs)} / ${round(withAgent.spawnMeanUs)} µs)`,
  );
  console.log(
    `  workload time in fsync+spawn calls: slowdown ${round(slowdown.pairedPct)}% (median of each round against the baseline run just before it; ${round(slowdown.totalPct)}% from the medians over all rounds) (bar < ${BARS.slowdownPct}%) ${pass.slowdown ? 'ok' : 'OVER'}`,
  );
  const cpuLine = (what: string, c: { node: number; bpftrace: number; total: number }) =>
    `${what}${round(c.total, 2)}% of one core (node ${round(c.node, 2)}%, bpftrace ${round(c.bpftrace, 2)}%)`;
  console.log(
    `${cpuLine(`agent CPU      steady (${SECONDS}+2 s after warm-up): `, cpu.steady)} (bar < ${BARS.cpuPctOfCore}%) ${pass.cpu ? 'ok' : 'OVER'}`,
  );
  console.log(cpuLine(`               first ${WARMUP_SECONDS} s after start: `, cpu.warmup));
  console.log(cpuLine(`               whole run: `, cpu.whole));
  console.log(
    `agent RSS      ${round(agent.rssMbPeak)} MB peak, node + bpftrace (bar < ${BARS.rssMb} MB) ${pass.rss ? 'ok' : 'OVER'}`,
  );
  console.log('memory, MB peak   rss     pss  private    anon  shared file-backed');
  for (const who of ['node', 'bpftrace', 'total'] as const) {
    const m = memory[who];
    const col = (x: number, w: number) => round(x).toFixed(1).padStart(w);
    console.log(
      `  ${who.padEnd(13)}${col(m.rss, 7)} ${col(m.pss, 7)} ${col(m.private, 8)} ${col(m.anon, 7)} ${col(m.sharedFile, 8)}`,
    );
  }
  for (const r of agent.selfReports) if (r) console.log(`  node, its own account at exit: ${r}`);
  console.log(
    `spans          ${delivered.join(', ')} delivered of ${expected.join(', ')} operations${traced.some((t) => t.lostEvents) ? ' (bpftrace reported lost events)' : ''}`,
  );

  const file = await writeResult('agent', {
    workload: {
      fsyncsPerS: FSYNC_RATE,
      spawnsPerS: SPAWN_RATE,
      warmupSeconds: WARMUP_SECONDS,
      seconds: SECONDS,
      rounds: ROUNDS,
      fsyncTarget: WORK_DIR,
    },
    kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(),
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    variants,
    without: base,
    with: withAgent,
    slowdown,
    agent,
    spans: { delivered, expected },
    bars: BARS,
    pass,
  });
  console.log(`wrote ${path.relative(ROOT, file)}`);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
