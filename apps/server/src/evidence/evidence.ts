import type { Queryable } from '../db/pool.ts';
import { attributeLifts, detectHints, type EvidenceSample, type ScalarAttr } from '@onset/core';
import type { Evidence, Hint, Span } from '@onset/contract';
import { saveHints, type RegressionRow } from '../regressions/store.ts';
import { edgeCalls, ownCalls, type CallRow, type EdgeLabels, type Window } from './query.ts';

/** How far either side of the onset evidence looks (raw spans are kept 48 h by default). */
const SIDE_MS = 2 * 60 * 60_000;
/** Calls read per side: enough for stable p90/p99 and shares, bounded work. */
const SIDE_LIMIT = 5000;
const TYPICAL = 3;
const SLOWEST = 2;

export interface EvidenceOptions {
  traceUrlTemplate?: string;
  nowMs?: number;
}

/** Calls before and after the onset, leaving out the onset's uncertainty. */
async function regressionCalls(
  pool: Queryable,
  r: RegressionRow,
  nowMs = Date.now(),
  limit = SIDE_LIMIT,
): Promise<{ before: CallRow[]; after: CallRow[] }> {
  const onset = r.onset.getTime();
  const unc = Math.min(r.onset_uncertainty_ms, SIDE_MS / 4);
  const before: Window = {
    fromMs: onset - unc - SIDE_MS,
    toMs: onset - unc,
    newestFirst: true,
    limit,
  };
  const after: Window = {
    fromMs: onset + unc,
    toMs: Math.min(nowMs, onset + unc + SIDE_MS),
    newestFirst: false,
    limit,
  };
  const [b, a] = await seriesCalls(pool, r, [before, after]);
  return { before: b!, after: a! };
}

/** The labels of a series that say where its calls are read from. */
export interface SeriesCallLabels {
  series_id: string;
  service: string;
  peer: string | null;
  op: string;
  name: string;
  view: string;
}

/**
 * A series' exemplar calls in each window: an edge's views are built from paired calls; a
 * caller's own client series may also have its spans directly (read when no paired call is).
 */
export async function seriesCalls(
  pool: Queryable,
  r: SeriesCallLabels,
  windows: readonly Window[],
): Promise<CallRow[][]> {
  const view = r.view;
  if (r.peer && (view === 'client' || view === 'server' || view === 'gap')) {
    const e: EdgeLabels = { service: r.service, peer: r.peer, op: r.op, name: r.name, view };
    const paired: CallRow[][] = [];
    for (const w of windows) paired.push(await edgeCalls(pool, e, w));
    if (paired.some((c) => c.length) || view === 'gap') return paired;
  }
  const own: CallRow[][] = [];
  for (const w of windows) own.push(await ownCalls(pool, r.series_id, w));
  return own;
}

const scalar = (v: unknown): v is ScalarAttr =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/**
 * Span attributes, then the resource facts (service, host, cohort attributes);
 * a span attribute wins a clash. On an edge call the other side's resource
 * facts come as `peer.*` (e.g. peer.dependency.hyper), so a callee's library
 * bump shows up on the caller's regression.
 */
export function mergedAttributes(c: CallRow): Record<string, ScalarAttr> {
  const out: Record<string, ScalarAttr> = { 'service.name': c.service, 'host.name': c.host };
  if (c.paired_service !== null) {
    out['peer.service.name'] = c.paired_service;
    if (c.paired_host !== null) out['peer.host.name'] = c.paired_host;
    for (const [k, v] of Object.entries(c.paired_res_attrs ?? {}))
      if (scalar(v)) out[`peer.${k}`] = v;
  }
  for (const [k, v] of Object.entries(c.res_attrs ?? {})) if (scalar(v)) out[k] = v;
  for (const [k, v] of Object.entries(c.attrs ?? {})) if (scalar(v)) out[k] = v;
  return out;
}

export function sample(c: CallRow): EvidenceSample {
  return {
    ms: c.measure_us / 1000,
    ...(c.callee_us !== null ? { calleeMs: c.callee_us / 1000 } : {}),
    attrs: mergedAttributes(c),
  };
}

/** Fill {trace_id}, {span_id}, {start_s}, {end_s} (Unix seconds, ±1 h, for viewers that want a time range). */
export function traceUrl(
  template: string,
  c: { trace_id: string; span_id: string; start: Date },
): string {
  const s = Math.floor(c.start.getTime() / 1000);
  return template
    .replaceAll('{trace_id}', c.trace_id)
    .replaceAll('{span_id}', c.span_id)
    .replaceAll('{start_s}', String(s - 3600))
    .replaceAll('{end_s}', String(s + 3600));
}

function span(c: CallRow, role: Span['role'], template: string | undefined): Span {
  const out: Span = {
    trace_id: c.trace_id,
    span_id: c.span_id,
    start: c.start.toISOString(),
    duration_ms: c.duration_us / 1000,
    host: c.host,
    service: c.service,
    attributes: mergedAttributes(c),
    role,
  };
  if (template) out.trace_url = traceUrl(template, c);
  if (c.paired_span_id !== null)
    out.paired = {
      span_id: c.paired_span_id,
      duration_ms: (c.paired_duration_us ?? 0) / 1000,
      host: c.paired_host ?? '',
      service: c.paired_service ?? '',
    };
  return out;
}

/** A few calls near the median of a side, then its slowest, by what the view measures. */
export function pickExemplars(calls: readonly CallRow[], template?: string): Span[] {
  if (!calls.length) return [];
  const byMeasure = [...calls].sort((a, b) => a.measure_us - b.measure_us);
  const mid = Math.floor(byMeasure.length / 2);
  const slowest = byMeasure.slice(-SLOWEST).reverse();
  const taken = new Set(slowest);
  const typical: CallRow[] = [];
  for (let d = 0; typical.length < TYPICAL && d < byMeasure.length; d++)
    for (const i of d === 0 ? [mid] : [mid - d, mid + d]) {
      const c = byMeasure[i];
      if (c && !taken.has(c) && typical.length < TYPICAL) {
        typical.push(c);
        taken.add(c);
      }
    }
  return [
    ...typical.map((c) => span(c, 'typical', template)),
    ...slowest.map((c) => span(c, 'slowest', template)),
  ];
}

/** Hints from calls already read (also used for the list's `hints`). */
function hintsFromCalls(r: RegressionRow, calls: { before: CallRow[]; after: CallRow[] }): Hint[] {
  return detectHints({
    op: r.op,
    view: r.view,
    before: calls.before.map(sample),
    after: calls.after.map(sample),
  });
}

/** Fewer calls per side for the hints stored with a regression: part of a detection pass. */
const STORED_HINTS_LIMIT = 2000;

/**
 * Compute and store a regression's hints (the list's and the alert's `hints`),
 * from calls up to `throughMs`. Called by detection when it opens a regression.
 */
export async function storeRegressionHints(
  db: Queryable,
  r: RegressionRow,
  throughMs: number,
): Promise<Hint[]> {
  const calls = await regressionCalls(db, r, throughMs, STORED_HINTS_LIMIT);
  const hints = hintsFromCalls(r, calls);
  await saveHints(db, r.id, hints);
  r.hints = hints;
  return hints;
}

/** GET /api/v1/regressions/{id}/evidence: exemplars, attribute lifts and hints from the raw spans around the onset. */
export async function regressionEvidence(
  pool: Queryable,
  r: RegressionRow,
  opts: EvidenceOptions = {},
): Promise<Evidence> {
  const calls = await regressionCalls(pool, r, opts.nowMs);
  const before = calls.before.map(sample);
  const after = calls.after.map(sample);
  return {
    exemplars: exemplarsOf(r, calls, opts.traceUrlTemplate),
    attributes: attributeLifts(before, after),
    hints: detectHints({ op: r.op, view: r.view, before, after }),
  };
}

/**
 * The exemplars of each side. With a cohort, the calls the headline describes:
 * the slow hosts' (before the onset too, unless they had none there: then every
 * host's), and apart from them the fast hosts' calls after the onset.
 */
function exemplarsOf(
  r: RegressionRow,
  calls: { before: CallRow[]; after: CallRow[] },
  template: string | undefined,
): Evidence['exemplars'] {
  const c = r.cohort;
  if (!c || !c.slow_hosts.length || !c.fast_hosts.length)
    return {
      before: pickExemplars(calls.before, template),
      after: pickExemplars(calls.after, template),
    };
  const on = (hosts: readonly string[]) => {
    const set = new Set(hosts);
    return (x: CallRow) => set.has(x.host) || (x.paired_host !== null && set.has(x.paired_host));
  };
  const slow = on(c.slow_hosts);
  const fast = on(c.fast_hosts);
  const slowBefore = calls.before.filter(slow);
  return {
    before: pickExemplars(slowBefore.length ? slowBefore : calls.before, template),
    after: pickExemplars(calls.after.filter(slow), template),
    cohort: {
      attribute: c.attribute,
      slow_hosts: c.slow_hosts,
      fast_hosts: c.fast_hosts,
      fast_after: pickExemplars(
        calls.after.filter((x) => fast(x) && !slow(x)),
        template,
      ),
    },
  };
}
