/**
 * Wires the agent together: sources and probes produce events, events become
 * spans, spans go through the bounded queue to the OTLP exporter.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { FsyncOperations, nowEpochNs } from './aggregate/fsync-operations.ts';
import type { AgentConfig } from './config/schema.ts';
import { isTraced, type AgentEvent, type EventSink } from './events.ts';
import { monotonicToEpochNs } from './host/clock.ts';
import { CpuContentionSampler } from './host/cpu-contention.ts';
import { HostCpuWindows } from './host/cpu-windows.ts';
import { DirtySampler } from './host/dirty-sampler.ts';
import { findExecutable, type HostFacts } from './host/facts.ts';
import { MountTable } from './host/mounts.ts';
import { dirtyAndWriteback, kernelPageSize } from './host/proc.ts';
import { CachedProcessProbe } from './host/process-stats.ts';
import { AgentClaims, defaultClaimsDir, procInfo } from './host/claims.ts';
import { ProgramNames } from './host/programs.ts';
import { ensureTracefs } from './host/tracefs.ts';
import { describeUnmountEnd, unmountEndProbes } from './host/tracepoints.ts';
import type { Logger } from './log.ts';
import { configuredProbes } from './probes/configured.ts';
import type { Probe } from './probes/probe.ts';
import { ProbeScheduler } from './probes/scheduler.ts';
import { BpftraceDecoder } from './sources/bpftrace/decode.ts';
import { buildProgram } from './sources/bpftrace/program.ts';
import { BpftraceSource } from './sources/bpftrace/source.ts';
import { cgroupId, cgroupPath, planBpftrace, planStrace, straceTargets } from './sources/select.ts';
import type { TracingSource } from './sources/source.ts';
import { StraceSource } from './sources/strace/source.ts';
import { buildResource, hostAttributes } from './telemetry/resource.ts';
import { SpanPipeline, type PipelineStats } from './telemetry/pipeline.ts';
import { eventToSpan } from './telemetry/spans.ts';
import { LeftOut } from './telemetry/left-out.ts';
import { TraceScope } from './telemetry/scope.ts';
import { SeriesCap } from './telemetry/series-cap.ts';

export interface AgentDeps {
  host: HostFacts;
  log: Logger;
  /** Also see every event (tests, the benchmark). */
  onEvent?: (e: AgentEvent) => void;
  /** Replace the OTLP exporter (never needed in production). */
  exporter?: SpanExporter;
}

export interface RunningAgent {
  /** Sources in use, e.g. ['bpftrace', 'probes']. */
  sources: string[];
  stats: PipelineStats;
  /** Record an event measured elsewhere (embedding, tests): it becomes a span like any other. */
  record(event: AgentEvent): void;
  /** Run one probe round now; resolves when done. */
  probeRound(): Promise<void>;
  /** Send queued spans now. */
  flush(): Promise<void>;
  /** Stop tracing and probing, flush, close. */
  stop(): Promise<void>;
}

function describeFilter(config: AgentConfig): string {
  const f = config.filter;
  const parts = [
    ...f.pids.map((p) => `pid ${p}`),
    ...f.comms.map((c) => `process name ${c}`),
    ...f.cgroups.map((c) => `cgroup ${c}`),
  ];
  return parts.length
    ? `${parts.join(', ')} (and their children)`
    : 'all processes except the agent';
}

/** Said once: which unmounts cannot be ended by the tick check, and what ends them instead. */
function noRegsWarning(log: Logger): (tid: number) => void {
  let said = false;
  return (tid) => {
    if (said) return;
    said = true;
    log.warn(
      `bpftrace: could not find the saved user registers of unmounting thread ${tid} (unknown kernel stack layout); unmounts of threads without rseq then end at their next system call only with --unmount-next-syscall, else at the thread's exit`,
    );
  };
}

/**
 * The host's CPU contention every operations window (docs/agent.md "Host CPU contention"), when
 * configured and readable here; the log says which. `stop` sends the window so far.
 */
function startHostCpu(
  config: AgentConfig,
  deliver: EventSink,
  log: Logger,
): { stop(): void } | undefined {
  if (!config.host.cpu) {
    log.info('host CPU: not reported (host.cpu is false)');
    return undefined;
  }
  const sampler = new CpuContentionSampler();
  const support = sampler.support();
  if (!support.ok) {
    log.info(`host CPU: not reported — ${support.reason}`);
    return undefined;
  }
  const windows = new HostCpuWindows(sampler, config.operations.windowMs, deliver);
  const every = `every ${config.operations.windowMs / 1000} s, in ms per second`;
  if (support.pressure)
    log.info(
      `host CPU: reporting stolen time (cpu-steal) and CPU pressure (cpu-pressure) ${every}`,
    );
  else
    log.info(
      `host CPU: reporting stolen time (cpu-steal) ${every}; no CPU pressure — ${support.noPressure}`,
    );
  windows.tick();
  const timer = setInterval(() => windows.tick(), 500);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      windows.flush();
    },
  };
}

export async function startAgent(config: AgentConfig, deps: AgentDeps): Promise<RunningAgent> {
  const { host, log } = deps;
  const resourceAttrs = { ...hostAttributes(host), ...config.resource };
  log.info(
    `exporting spans to ${config.tracesUrl} (from ${config.tracesUrlFrom}) as service "${config.serviceName}"; ` +
      Object.entries(resourceAttrs)
        .map(([k, v]) => `${k}=${v}`)
        .join(', '),
  );

  const exporter =
    deps.exporter ??
    new OTLPTraceExporter({
      url: config.tracesUrl,
      headers: config.headers,
      timeoutMillis: config.export.timeoutMs,
    });
  const pipeline = new SpanPipeline(
    exporter,
    buildResource(host, { serviceName: config.serviceName, attributes: config.resource }),
    {
      batchSize: config.export.batchSize,
      flushIntervalMs: config.export.flushIntervalMs,
      maxQueueSpans: config.export.maxQueueSpans,
      maxQueueBytes: config.export.maxQueueBytes,
      exportTimeoutMs: config.export.timeoutMs + 5_000,
      destination: config.tracesUrl,
    },
    log,
  );
  pipeline.start();
  const probeDir = `${config.probes.dir}/`;
  const hostWide =
    config.filter.pids.length + config.filter.comms.length + config.filter.cgroups.length === 0;
  const scope = new TraceScope(config.scope, hostWide);
  const left = new LeftOut(log);
  const cap = new SeriesCap(config.scope.maxNewSeriesPerMinute, (r) =>
    log.warn(
      `series cap: dropped ${r.droppedSpans} spans of ${r.droppedSeries} new series in the last minute ` +
        `(more than ${config.scope.maxNewSeriesPerMinute} new series a minute; e.g. ${r.examples.join('; ')}); ` +
        `${r.totalDroppedSpans} since start. Narrow the scope (--exclude, --comm) or raise --max-new-series`,
    ),
  );
  const claims = new AgentClaims(defaultClaimsDir(host.env, host.uid), {
    pid: process.pid,
    startTicks: procInfo(process.pid)?.startTicks ?? 0,
    service: config.serviceName,
    pids: config.filter.pids,
    comms: config.filter.comms,
    cgroups: config.filter.cgroups.map(cgroupPath),
    probeDir: config.probes.dir,
  });
  try {
    claims.publish();
  } catch (e) {
    log.warn(
      `cannot publish this agent's claim (${(e as Error).message}): an agent tracing the whole host may report this agent's processes too`,
    );
  }
  const leftOutTimer = setInterval(() => {
    left.report();
    cap.flush();
  }, 60_000);
  leftOutTimer.unref();
  const programs = new ProgramNames();
  const deliver = (event: AgentEvent): void => {
    const span = eventToSpan(event);
    // Tracing the whole host, a traced span is its program's; a filtered agent's are its service's.
    if (hostWide && isTraced(event)) span.service = programs.of(event);
    // Probes' and host series are the agent's own; traced ones come from whatever runs on the host.
    if (isTraced(event) && !cap.admit(span)) return;
    pipeline.add(span);
    deps.onEvent?.(event);
  };
  // Traced fsyncs are also grouped into operations and per-minute rates (docs/agent.md "Operations").
  const ops = config.operations.enabled
    ? new FsyncOperations(
        {
          gapMs: config.operations.fsyncGapMs,
          maxBurstMs: config.operations.maxBurstMs,
          windowMs: config.operations.windowMs,
          latenessMs: config.operations.latenessMs,
        },
        deliver,
      )
    : undefined;
  const opsTimer = ops && setInterval(() => ops.flush(nowEpochNs()), 500);
  opsTimer?.unref();
  const hostCpu = startHostCpu(config, deliver, log);
  const sink: EventSink = (event) => {
    // The mount probe's umount(8) child is seen by the tracers too; the probe reports it itself.
    if (isTraced(event) && event.kind === 'unmount' && event.mountPoint.startsWith(probeDir))
      return;
    if (isTraced(event)) {
      // A span is one agent's: a process another agent reports is that agent's, not this one's.
      const owner = hostWide ? claims.ownerOf(event) : undefined;
      if (owner) return left.otherAgent(owner);
      const excluded = scope.excluded(event);
      if (excluded) return left.outOfScope(excluded);
    }
    deliver(event);
    if (event.kind === 'fsync') ops?.add(event);
  };

  const inUse: string[] = [];
  const tracers: TracingSource[] = [];
  const mounts = new MountTable();

  // 1. bpftrace
  const bt = planBpftrace(config, host);
  let bpftraceRunning = false;
  if (bt.use) {
    const tracefs = ensureTracefs(findExecutable(host, 'mount'));
    if (tracefs.note) log.info(`bpftrace: ${tracefs.note}`);
    if (!tracefs.ok) {
      log.warn(`source bpftrace: not used — ${tracefs.note}`);
    } else {
      const unmountEnd = unmountEndProbes({ nextSyscall: config.sources.unmountNextSyscall });
      const program = buildProgram(
        {
          pids: config.filter.pids,
          comms: config.filter.comms,
          cgroupIds: config.filter.cgroups.map(cgroupId),
          skipPids: [process.pid],
        },
        bt.layout!,
        unmountEnd,
      );
      const source = new BpftraceSource({
        bpftracePath: bt.path!,
        program,
        decoder: new BpftraceDecoder({
          sink,
          mounts,
          toEpochNs: monotonicToEpochNs,
          pageSize: kernelPageSize(),
          dirtyNow: dirtyAndWriteback,
          onUnmountNoRegs: noRegsWarning(log),
          onLost: (kind, n) =>
            log.warn(
              `bpftrace: ${n} ${kind} events did not reach the agent (buffer full or bpftrace fell behind); narrow the filter if this repeats`,
            ),
        }),
        log,
        scope: describeFilter(config),
        env: host.env,
      });
      try {
        await source.start();
        tracers.push(source);
        inUse.push('bpftrace');
        bpftraceRunning = true;
        log.info(
          `source bpftrace: in use — ${bt.reason}; ${source.describe()} (attached in ${(source.startupMs / 1000).toFixed(1)} s)`,
        );
        const unmountNote = `bpftrace: ${describeUnmountEnd(unmountEnd)}`;
        if (unmountEnd.rseq || unmountEnd.tick || unmountEnd.nextSyscall) log.info(unmountNote);
        else log.warn(unmountNote);
      } catch (e) {
        log.warn(`source bpftrace: not used — it failed to start: ${(e as Error).message}`);
      }
    }
  } else {
    log.info(`source bpftrace: not used — ${bt.reason}`);
  }

  // 2. strace, when bpftrace is not running
  const st = planStrace(config, host, bpftraceRunning);
  let straceRetry: NodeJS.Timeout | undefined;
  if (st.use) {
    const source = new StraceSource({
      stracePath: st.path!,
      targets: () => straceTargets(config),
      sink,
      log,
      mounts,
      dirty: new DirtySampler(),
      proc: new CachedProcessProbe(),
    });
    const tryStart = async (): Promise<boolean> => {
      try {
        await source.start();
        tracers.push(source);
        inUse.push('strace');
        log.info(`source strace: in use — ${st.reason}; ${source.describe()}`);
        log.info(
          'strace: unmount spans time the umount system call only (strace does not see the ' +
            'superblock shutdown the kernel defers to the return to user space); bpftrace does',
        );
        return true;
      } catch (e) {
        log.warn(`source strace: not used yet — ${(e as Error).message}; retrying every 30 s`);
        return false;
      }
    };
    if (!(await tryStart())) {
      straceRetry = setInterval(() => {
        void tryStart().then((ok) => ok && clearInterval(straceRetry));
      }, 30_000);
      straceRetry.unref();
    }
  } else {
    log.info(`source strace: not used — ${st.reason}`);
  }

  // 3. synthetic probes, always available
  let scheduler: ProbeScheduler | undefined;
  if (config.sources.probes) {
    const p = config.probes;
    const candidates = configuredProbes(p, host, log);
    const probes: Probe[] = [];
    for (const probe of candidates) {
      const a = probe.check();
      if (a.ok) {
        probes.push(probe);
        log.info(`probe ${probe.name}: ${a.detail}`);
      } else log.info(`probe ${probe.name}: skipped — ${a.reason}`);
    }
    if (probes.length) {
      scheduler = new ProbeScheduler(probes, p.intervalMs, sink, log);
      inUse.push('probes');
      if (!config.once) {
        scheduler.start();
        log.info(`probes run now and then every ${p.intervalMs / 1000} s`);
      }
    }
  } else {
    log.info('probes: turned off (--no-probes)');
  }
  log.info(`running with ${inUse.length ? inUse.join(' + ') : 'no sources'}`);
  if (inUse.includes('bpftrace') || inUse.includes('strace'))
    log.info(
      `scope: ${scope.description}; at most ${config.scope.maxNewSeriesPerMinute} new series a minute` +
        (hostWide ? '; processes other Onset agents report are left to them' : ''),
    );

  let stopped: Promise<void> | undefined;
  return {
    sources: inUse,
    stats: pipeline.stats,
    record: sink,
    probeRound: () => scheduler?.round() ?? Promise.resolve(),
    flush: () => pipeline.flush(),
    stop: () =>
      (stopped ??= (async () => {
        if (straceRetry) clearInterval(straceRetry);
        await scheduler?.stop();
        await Promise.all(
          tracers.map((t) =>
            t.stop().catch((e) => log.warn(`${t.name}: stop failed: ${(e as Error).message}`)),
          ),
        );
        if (opsTimer) clearInterval(opsTimer);
        hostCpu?.stop();
        clearInterval(leftOutTimer);
        claims.withdraw();
        left.report();
        cap.flush();
        ops?.flush(nowEpochNs(), true); // operations and windows still open are sent as they are
        await pipeline.shutdown(config.export.timeoutMs + 1_000);
      })()),
  };
}
