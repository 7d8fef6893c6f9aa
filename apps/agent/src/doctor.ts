/**
 * `onset-agent doctor`: which sources work on this host and why not, checked
 * for real (bpftrace is started and attached; the collector is called).
 */
import type { AgentConfig } from './config/schema.ts';
import { findExecutable, type HostFacts } from './host/facts.ts';
import { configuredProbes } from './probes/configured.ts';
import { MountTable } from './host/mounts.ts';
import { kernelPageSize } from './host/proc.ts';
import { ensureTracefs } from './host/tracefs.ts';
import { createLogger } from './log.ts';
import { BpftraceDecoder } from './sources/bpftrace/decode.ts';
import { buildProgram } from './sources/bpftrace/program.ts';
import { describeUnmountEnd, unmountEndProbes } from './host/tracepoints.ts';
import { BpftraceSource } from './sources/bpftrace/source.ts';
import { cgroupId, planBpftrace, planStrace, straceTargets } from './sources/select.ts';

export interface DoctorLine {
  ok: boolean;
  what: string;
  detail: string;
}

async function checkBpftrace(config: AgentConfig, host: HostFacts): Promise<DoctorLine> {
  const plan = planBpftrace(config, host);
  if (!plan.use) return { ok: false, what: 'bpftrace', detail: plan.reason };
  const tracefs = ensureTracefs(findExecutable(host, 'mount'));
  if (!tracefs.ok) return { ok: false, what: 'bpftrace', detail: tracefs.note! };
  const unmountEnd = unmountEndProbes({ nextSyscall: config.sources.unmountNextSyscall });
  const quiet = createLogger('error', () => {});
  const source = new BpftraceSource({
    bpftracePath: plan.path!,
    program: buildProgram(
      {
        pids: config.filter.pids,
        comms: config.filter.comms,
        cgroupIds: config.filter.cgroups.map(cgroupId),
        skipPids: [process.pid],
      },
      plan.layout!,
      unmountEnd,
    ),
    decoder: new BpftraceDecoder({
      sink: () => {},
      mounts: new MountTable(),
      toEpochNs: (n) => n,
      pageSize: kernelPageSize(),
      dirtyNow: () => undefined,
    }),
    log: quiet,
    scope: '',
    env: host.env,
  });
  try {
    await source.start();
    return {
      ok: true,
      what: 'bpftrace',
      detail: `${plan.reason}; a test run attached ${source.attachedProbes} probes in ${(source.startupMs / 1000).toFixed(1)} s${tracefs.note ? ` (${tracefs.note})` : ''}; ${describeUnmountEnd(unmountEnd)}`,
    };
  } catch (e) {
    return { ok: false, what: 'bpftrace', detail: (e as Error).message };
  } finally {
    await source.stop();
  }
}

function checkStrace(config: AgentConfig, host: HostFacts, bpftraceWorks: boolean): DoctorLine {
  // Judge strace as the fallback it is, even when bpftrace works.
  const plan = planStrace(config, host, false);
  if (!plan.use) return { ok: false, what: 'strace', detail: plan.reason };
  const targets = straceTargets(config);
  const note = bpftraceWorks ? ' (fallback only: bpftrace is preferred)' : '';
  if (targets.length === 0)
    return {
      ok: false,
      what: 'strace',
      detail: `${plan.reason}, but no running process matches the filter`,
    };
  return {
    ok: true,
    what: 'strace',
    detail: `${plan.reason}; would attach to pid ${targets.join(', ')}${note}`,
  };
}

async function checkCollector(config: AgentConfig): Promise<DoctorLine> {
  try {
    // An empty ExportTraceServiceRequest is a zero-length protobuf message.
    const res = await fetch(config.tracesUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', ...config.headers },
      body: new Uint8Array(0),
      signal: AbortSignal.timeout(5_000),
    });
    const ok = res.status >= 200 && res.status < 300;
    const hint =
      res.status === 401 || res.status === 403
        ? ' (set OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer <ingest token>")'
        : '';
    return { ok, what: 'collector', detail: `${config.tracesUrl} answered ${res.status}${hint}` };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    return {
      ok: false,
      what: 'collector',
      detail: `${config.tracesUrl} unreachable: ${err.cause?.code ?? err.cause?.message ?? err.message}`,
    };
  }
}

export async function runDoctor(config: AgentConfig, host: HostFacts): Promise<DoctorLine[]> {
  const lines: DoctorLine[] = [];
  const bt = await checkBpftrace(config, host);
  lines.push(bt, checkStrace(config, host, bt.ok));
  const p = config.probes;
  const log = createLogger('error', () => {});
  const probes = configuredProbes(p, host, log, { includeDisabled: true });
  for (const probe of probes) {
    const a = probe.check();
    lines.push({ ok: a.ok, what: `probe ${probe.name}`, detail: a.ok ? a.detail : a.reason });
  }
  lines.push(await checkCollector(config));
  return lines;
}

export function formatDoctor(host: HostFacts, lines: DoctorLine[]): string {
  const width = Math.max(...lines.map((l) => l.what.length));
  return [
    `onset-agent doctor: ${host.hostname}, Linux ${host.kernelRelease} (${host.arch}), uid ${host.uid}`,
    ...lines.map((l) => `  ${l.ok ? 'ok  ' : 'no  '}${l.what.padEnd(width)}  ${l.detail}`),
  ].join('\n');
}
