/**
 * Agent events -> span records, named the way Onset classifies them
 * (docs/api.md "How a span becomes an observation"): `process.spawn` with
 * `process.executable.name`, `fsync` with `file.directory`, `umount` with
 * `fs.mountpoint`, HTTP client spans with `http.request.method` and
 * `server.address`; every span also carries an explicit `onset.op`.
 */
import path from 'node:path';
import type { Attributes } from '@opentelemetry/api';
// The attributes evidence hints read are named once, in the contract.
import { HINT_ATTRS } from '@onset/contract';
import {
  isTraced,
  type AgentEvent,
  type FsyncEvent,
  type FsyncOperationEvent,
  type FsyncRateEvent,
  type HostCpuEvent,
  type RequestEvent,
  type SpawnEvent,
  type UnmountEvent,
} from '../events.ts';
import { newSpanId, newTraceId } from './ids.ts';
import { normalizeComponent, normalizePath } from './normalize.ts';
import { SpanKind, type SpanRecord } from './span-record.ts';

function put(
  attrs: Attributes,
  key: string,
  value: string | number | boolean | string[] | undefined,
): void {
  if (
    value !== undefined &&
    value !== '' &&
    !(typeof value === 'number' && !Number.isFinite(value))
  )
    attrs[key] = value;
}

function base(e: AgentEvent, op: string): Attributes {
  const attrs: Attributes = { 'onset.op': op, 'onset.source': e.source };
  put(attrs, 'onset.probe', e.probe);
  put(attrs, 'error.type', e.error ? 'error' : undefined);
  return attrs;
}

// Traced events name series after host paths: their generated parts are folded (normalize.ts).

function spawnSpan(e: SpawnEvent): SpanRecord {
  const attrs = base(e, 'spawn');
  const exe = path.basename(e.executable);
  put(attrs, 'process.executable.name', e.label ?? (isTraced(e) ? normalizeComponent(exe) : exe));
  put(attrs, 'process.executable.path', e.executable);
  put(attrs, HINT_ATTRS.spawnMethod, e.method);
  if (e.sharedMemory !== undefined) attrs['onset.spawn.shared_memory'] = e.sharedMemory;
  put(
    attrs,
    'onset.spawn.clone_flags',
    e.cloneFlags !== undefined ? `0x${e.cloneFlags.toString(16)}` : undefined,
  );
  put(attrs, 'process.pid', e.pid);
  put(attrs, 'process.parent_pid', e.parentPid);
  put(attrs, 'onset.parent.name', e.parentComm);
  put(attrs, HINT_ATTRS.parentOpenFds, e.parentFdCount);
  put(attrs, HINT_ATTRS.parentRssBytes, e.parentRssBytes);
  return record('process.spawn', SpanKind.INTERNAL, e, attrs);
}

function fsyncSpan(e: FsyncEvent): SpanRecord {
  const attrs = base(e, 'fsync');
  if (e.label) {
    // A batch (WAL removal): its own series, named by the label, so no file.directory.
    put(attrs, 'onset.fsync.directory', e.directory);
  } else {
    const mp = e.call === 'syncfs' ? e.mountPoint : undefined;
    put(attrs, 'fs.mountpoint', mp && isTraced(e) ? normalizePath(mp) : mp);
    const dir = e.directory && isTraced(e) ? normalizePath(e.directory) : e.directory;
    put(attrs, 'file.directory', dir);
    if (dir !== e.directory) put(attrs, 'onset.fsync.directory', e.directory);
  }
  put(attrs, 'file.path', e.path);
  put(attrs, 'onset.fsync.operations', e.operations);
  put(attrs, HINT_ATTRS.fsyncCount, e.fsyncs);
  put(attrs, 'process.pid', e.pid);
  put(attrs, 'process.executable.name', e.comm);
  return record(e.label ?? e.call, SpanKind.INTERNAL, e, attrs);
}

/**
 * The series name of an fsync operation: `fsync-burst <directory>` (folded like the per-call
 * series), or `fsync-burst <process name>` when the directory is unknown. It is the span name
 * and not file.directory, so operations never mix into the per-call series of their directory.
 */
function fsyncOperationName(e: FsyncOperationEvent): string {
  if (e.directory) return `fsync-burst ${isTraced(e) ? normalizePath(e.directory) : e.directory}`;
  return `fsync-burst ${e.comm ? normalizeComponent(e.comm) : 'unknown'}`;
}

function fsyncOperationSpan(e: FsyncOperationEvent): SpanRecord {
  const attrs = base(e, 'fsync');
  attrs['onset.operation'] = 'fsync-burst';
  attrs[HINT_ATTRS.fsyncCount] = e.count;
  attrs[HINT_ATTRS.fsyncTotalNs] = e.syscallNs;
  attrs['onset.fsync.max_ns'] = e.maxCallNs;
  put(attrs, 'onset.fsync.errors', e.errors || undefined);
  attrs['onset.fsync.gap_ms'] = e.gapMs;
  if (e.cut) attrs['onset.fsync.cut'] = true;
  put(attrs, 'onset.fsync.directory', e.directory);
  put(attrs, 'process.pid', e.pid);
  put(attrs, 'thread.id', e.tid);
  put(attrs, 'process.executable.name', e.comm);
  return record(fsyncOperationName(e), SpanKind.INTERNAL, e, attrs);
}

/** `fsync-rate <process name>`: time in fsync-family calls per second of a window. */
function fsyncRateSpan(e: FsyncRateEvent): SpanRecord {
  const attrs = base(e, 'fsync');
  attrs['onset.operation'] = 'fsync-rate';
  attrs[HINT_ATTRS.fsyncCalls] = e.calls;
  attrs[HINT_ATTRS.fsyncCallsPerS] = Math.round((e.calls * 1e5) / e.windowMs) / 100;
  attrs[HINT_ATTRS.fsyncTotalNs] = e.syscallNs;
  attrs['onset.window_ms'] = e.windowMs;
  attrs['onset.processes'] = e.processes;
  attrs['process.executable.name'] = e.comm;
  return record(`fsync-rate ${e.comm}`, SpanKind.INTERNAL, e, attrs);
}

function unmountSpan(e: UnmountEvent): SpanRecord {
  const attrs = base(e, 'unmount');
  const mp = e.label ?? (isTraced(e) ? normalizePath(e.mountPoint) : e.mountPoint);
  put(attrs, 'fs.mountpoint', mp);
  put(attrs, 'onset.unmount.path', mp !== e.mountPoint ? e.mountPoint : undefined);
  put(attrs, HINT_ATTRS.fsType, e.fsType);
  put(attrs, HINT_ATTRS.dirtyBytes, e.dirtyBytes);
  put(attrs, HINT_ATTRS.writebackBytes, e.writebackBytes);
  put(attrs, 'onset.unmount.written_bytes', e.writtenBytes);
  put(attrs, 'onset.unmount.flags', e.flags);
  put(attrs, 'onset.unmount.measured_until', e.measuredUntil);
  put(attrs, 'onset.unmount.syscall_ns', e.syscallNs);
  put(attrs, 'onset.unmount.end_uncertainty_ns', e.endUncertaintyNs);
  put(attrs, 'process.pid', e.pid);
  put(attrs, 'process.executable.name', e.comm);
  return record('umount', SpanKind.INTERNAL, e, attrs);
}

/**
 * `cpu-steal` / `cpu-pressure`: the host's CPU contention over a window. The duration is the
 * value in ms per second, so the series' quantiles read as such (0 is a valid 0-length span).
 */
function hostCpuSpan(e: HostCpuEvent): SpanRecord {
  const attrs = base(e, 'host');
  attrs['onset.window_ms'] = e.windowMs;
  attrs['onset.host.cpus'] = e.cpus;
  // The share itself, unrounded: stolen / CPU time wanted, or waiting time / wall time.
  attrs['onset.host.ratio'] = e.msPerS / 1000;
  return record(`cpu-${e.metric}`, SpanKind.INTERNAL, e, attrs);
}

/** Attribute-safe Server-Timing metric name (`db`, `cache-read` -> `cache_read`). */
function metricKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, 64);
}

function requestSpan(e: RequestEvent): SpanRecord {
  const attrs = base(e, 'request');
  const url = new URL(e.url);
  attrs['http.request.method'] = e.method;
  attrs['url.full'] = e.url;
  attrs['server.address'] = url.hostname;
  put(attrs, 'server.port', url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);
  put(attrs, 'http.response.status_code', e.statusCode);
  if (e.serverTimingHeader) attrs['http.response.header.server-timing'] = [e.serverTimingHeader];
  for (const t of e.serverTiming) {
    put(attrs, `onset.server_timing.${metricKey(t.name)}.dur_ms`, t.durMs);
    put(attrs, `onset.server_timing.${metricKey(t.name)}.desc`, t.desc);
  }
  if (e.statusCode !== undefined && e.statusCode >= 500) attrs['error.type'] = String(e.statusCode);
  const r = record(e.label ?? `${e.method} ${url.pathname}`, SpanKind.CLIENT, e, attrs);
  r.traceId = e.traceId;
  r.spanId = e.spanId;
  return r;
}

function record(name: string, kind: SpanKind, e: AgentEvent, attributes: Attributes): SpanRecord {
  return {
    name,
    kind,
    traceId: newTraceId(),
    spanId: newSpanId(),
    startNs: e.startNs,
    durationNs: e.durationNs,
    attributes,
    error: e.error,
  };
}

export function eventToSpan(e: AgentEvent): SpanRecord {
  switch (e.kind) {
    case 'spawn':
      return spawnSpan(e);
    case 'fsync':
      return fsyncSpan(e);
    case 'unmount':
      return unmountSpan(e);
    case 'request':
      return requestSpan(e);
    case 'fsync-operation':
      return fsyncOperationSpan(e);
    case 'fsync-rate':
      return fsyncRateSpan(e);
    case 'host-cpu':
      return hostCpuSpan(e);
  }
}
