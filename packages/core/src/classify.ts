/**
 * How a span becomes an observation (docs: api.md "How a span becomes an
 * observation"). Pure: takes decoded attributes, returns labels.
 */
import { OPS, type Op, type View } from '@onset/contract';
import { templateName } from './fold.ts';

export type AttrValue = string | number | boolean | null | AttrValue[] | { [k: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

/** OTLP SpanKind numbers. */
export const SpanKind = {
  UNSPECIFIED: 0,
  INTERNAL: 1,
  SERVER: 2,
  CLIENT: 3,
  PRODUCER: 4,
  CONSUMER: 5,
} as const;

export interface SeriesLabels {
  service: string;
  op: Op;
  view: View;
  name: string;
  /** Callee for client spans ('' when unknown or not a client span). */
  peer: string;
}

/** The host-side identity of an observation, used for cohorts. */
export interface ResourceLabels {
  service: string;
  host: string;
  /** Cohort attributes only: os.version, service.version, host.arch, dependency.*, onset.cohort.* */
  attrs: Record<string, string>;
}

const SPAWN_NAMES = new Set(['spawn', 'process.spawn', 'exec']);
const FSYNC_NAMES = new Set(['fsync', 'fdatasync', 'fs.fsync']);
const UNMOUNT_NAMES = new Set(['umount', 'unmount', 'fs.unmount']);
const EXPLICIT_OPS = new Set<string>(OPS);

const MAX_LABEL = 256;

function str(v: AttrValue | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** At most 256 code units, never ending in the high half of a surrogate pair (jsonb refuses a lone one). */
function clip(s: string): string {
  if (s.length <= MAX_LABEL) return s;
  const last = s.charCodeAt(MAX_LABEL - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_LABEL - 1 : MAX_LABEL);
}

/*
 * The SDKs' conventions, old and new (docs/api.md "Span conventions"): HTTP
 * `http.request.method` / `http.method`, `http.route` / `url.template`, `url.full` / `http.url`, `url.path` /
 * `http.target`, `server.address` / `net.peer.name`; RPC `rpc.system`,
 * `rpc.service`, `rpc.method`; databases `db.system.name` / `db.system`,
 * `db.query.summary`, `db.operation.name` / `db.operation`,
 * `db.collection.name` / `db.sql.table`.
 */
const httpMethod = (a: Attributes) => str(a['http.request.method']) ?? str(a['http.method']);
const isRpc = (a: Attributes) => str(a['rpc.system']) !== undefined;
const isDb = (a: Attributes) => (str(a['db.system.name']) ?? str(a['db.system'])) !== undefined;

/** A span name that says no more than its method: `GET` (Python's requests), `HTTP GET` (Go's otelhttp). */
function onlyMethod(spanName: string, method: string): boolean {
  if (spanName === method || spanName === 'HTTP' || spanName === '') return true;
  if (spanName.length !== method.length && spanName.length !== method.length + 5) return false;
  const n = spanName.toUpperCase();
  const m = method.toUpperCase();
  return n === m || n === `HTTP ${m}`;
}

/** Where a path ends: its query or fragment, else the end. */
function pathEnd(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3f /* ? */ || c === 0x23 /* # */) return i;
  }
  return s.length;
}

/**
 * Host and path of an absolute URL (`url.full` / `http.url`), read by hand: every client span of
 * the old conventions carries one with a concrete id, and WHATWG URL parsing cost more than the
 * rest of its classification. Null when it is not `scheme://authority...`.
 */
function splitUrl(full: string): { host: string; path: string } | null {
  // A client span asks twice (its name's path, then its peer): the last answer is kept.
  if (full === lastUrl) return lastParts;
  lastUrl = full;
  return (lastParts = readUrl(full));
}
let lastUrl = '';
let lastParts: { host: string; path: string } | null = null;

function readUrl(full: string): { host: string; path: string } | null {
  const scheme = full.indexOf('://');
  if (scheme <= 0) return null;
  const from = scheme + 3;
  let end = from;
  while (end < full.length) {
    const c = full.charCodeAt(end);
    if (c === 0x2f /* / */ || c === 0x3f || c === 0x23) break;
    end++;
  }
  const at = full.lastIndexOf('@', end - 1); // user:password@host
  let host = full.slice(at >= from ? at + 1 : from, end);
  if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1);
  else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  const stop = pathEnd(full, end);
  return { host: host.toLowerCase(), path: full.slice(end, stop) || '/' };
}

const fullUrl = (a: Attributes) => str(a['url.full']) ?? str(a['http.url']);

/** The path of a request's URL without its query: `url.path`, `http.target`, else from `url.full` / `http.url`. */
function urlPath(a: Attributes): string | undefined {
  const direct = str(a['url.path']) ?? str(a['http.target']);
  if (direct) return direct.slice(0, pathEnd(direct, 0)) || '/';
  const full = fullUrl(a);
  return full ? splitUrl(full)?.path : undefined;
}

/** The host a request's URL names (`url.full` / `http.url`), for a client span without `server.address`. */
function urlHost(a: Attributes): string | undefined {
  const full = fullUrl(a);
  return (full && splitUrl(full)?.host) || undefined;
}

/** What names a request that says only its method and where it went nothing at all. */
export const NO_ROUTE = '(no route)';

/** A client span's callee: `peer.service`, `server.address` / `net.peer.name`, the URL's host. */
function clientPeer(a: Attributes): string {
  return (
    str(a['peer.service']) ??
    str(a['server.address']) ??
    str(a['net.peer.name']) ??
    urlHost(a) ??
    ''
  );
}

/** A server span's own address, without its port (`server.address`, `net.host.name`, `http.host`). */
function serverHost(a: Attributes): string {
  const h = str(a['server.address']) ?? str(a['net.host.name']) ?? str(a['http.host']) ?? '';
  return h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.replace(/:\d+$/, '');
}

function requestName(spanName: string, a: Attributes, view?: View): string {
  const method = httpMethod(a);
  // http.route on servers; url.template is the client side's (newer conventions).
  const route = str(a['http.route']) ?? str(a['url.template']);
  if (method && route) return `${method.toUpperCase()} ${route}`;
  if (method && onlyMethod(spanName, method)) {
    // A bare method names nothing: the URL's path, templated, says which call it was.
    const path = urlPath(a);
    if (path) return templateName(`${method.toUpperCase()} ${path}`);
    // No URL either: the host it was for names it (a client's peer, a server's own address),
    // never the bare method. Once it pairs, a client's calls take the callee's route.
    const host = view === 'server' ? serverHost(a) : view === 'client' ? clientPeer(a) : '';
    return `${method.toUpperCase()} ${host || NO_ROUTE}`;
  }
  if (isRpc(a)) {
    const service = str(a['rpc.service']);
    const method = str(a['rpc.method']);
    if (method) return method.includes('/') || !service ? method : `${service}/${method}`;
  }
  if (isDb(a)) {
    const summary = str(a['db.query.summary']);
    if (summary) return templateName(summary);
    const op = str(a['db.operation.name']) ?? str(a['db.operation']);
    const target = str(a['db.collection.name']) ?? str(a['db.sql.table']);
    if (op) return target ? `${op} ${target}` : op;
  }
  return templateName(spanName);
}

export function classifyOp(spanName: string, attrs: Attributes): Op {
  const explicit = str(attrs['onset.op']);
  if (explicit && EXPLICIT_OPS.has(explicit)) return explicit as Op;
  if (httpMethod(attrs) || isRpc(attrs) || isDb(attrs)) return 'request';
  const n = spanName.toLowerCase();
  if (SPAWN_NAMES.has(n)) return 'spawn';
  if (FSYNC_NAMES.has(n)) return 'fsync';
  if (UNMOUNT_NAMES.has(n)) return 'unmount';
  return 'other';
}

export function classifyView(kind: number): View {
  if (kind === SpanKind.SERVER || kind === SpanKind.CONSUMER) return 'server';
  if (kind === SpanKind.CLIENT || kind === SpanKind.PRODUCER) return 'client';
  return 'internal';
}

/**
 * The series name. A declared `http.route` is used as the instrumentation
 * wrote it; a request or other span named by its span name is templated first
 * (`GET /users/12345` -> `GET /users/{id}`, see fold.ts) so un-templated ids
 * do not make a series each. Executables and directories (spawn, fsync,
 * unmount) are kept: the agent folds its own paths, and a chosen path such as
 * `/var/lib/postgresql/16/main` names one real directory.
 */
export function observationName(op: Op, spanName: string, attrs: Attributes, view?: View): string {
  switch (op) {
    case 'request':
      return clip(requestName(spanName, attrs, view));
    case 'spawn':
      return clip(str(attrs['process.executable.name']) ?? spanName);
    case 'fsync':
    case 'unmount':
      return clip(str(attrs['fs.mountpoint']) ?? str(attrs['file.directory']) ?? spanName);
    default:
      return clip(templateName(spanName));
  }
}

export function classifySpan(
  span: { name: string; kind: number; attributes: Attributes },
  resource: ResourceLabels,
): SeriesLabels {
  const op = classifyOp(span.name, span.attributes);
  const view = classifyView(span.kind);
  const a = span.attributes;
  const peer = view === 'client' ? clip(clientPeer(a)) : '';
  return {
    service: resource.service,
    op,
    view,
    name: observationName(op, span.name, span.attributes, view),
    peer,
  };
}

/** Resource attributes Onset keeps for cohorts. */
export function isCohortAttribute(key: string): boolean {
  return (
    key === 'os.version' ||
    key === 'service.version' ||
    key === 'host.arch' ||
    key.startsWith('dependency.') ||
    key.startsWith('onset.cohort.')
  );
}

export function resourceLabels(attrs: Attributes): ResourceLabels {
  const cohort: Record<string, string> = {};
  for (const key of Object.keys(attrs).sort()) {
    if (!isCohortAttribute(key)) continue;
    const v = str(attrs[key]);
    if (v !== undefined) cohort[clip(key)] = clip(v);
  }
  return {
    service: clip(str(attrs['service.name']) ?? 'unknown_service'),
    host: clip(str(attrs['host.name']) ?? ''),
    attrs: cohort,
  };
}
