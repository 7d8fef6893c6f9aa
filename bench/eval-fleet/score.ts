/**
 * Scores what the server reported against the generator's ground truth:
 * each incident found once / more than once / missed, spurious regressions
 * (per service-day, and on services where nothing changed), top-1 suspect,
 * cohort, and the data minutes from the change to the regression.
 */
import type { Regression } from '@onset/contract';
import { MIN, type Fleet, type Incident, type IncidentKind } from './fleet.ts';
import type { ReplayResult, SeenRegression } from './replay.ts';

/** A regression matches an incident when its onset is this close to the incident's changes. */
const BEFORE_MS = 15 * MIN;
const AFTER_MS = 30 * MIN;

export interface IncidentOutcome {
  id: string;
  kind: IncidentKind;
  size: string;
  canary: boolean;
  regressed_hosts: number;
  series_hosts: number;
  /** Regressions that report it (views of one incident opened separately count separately). */
  found: number;
  regressions: string[];
  top_suspect_right: boolean | null;
  top_suspect: string | null;
  cohort_right: boolean | null;
  cohort: string | null;
  /** Data minutes from its first change to the first pass that listed it. */
  detect_minutes: number | null;
  /** Reported onset minus its first change, in minutes. */
  onset_error_minutes: number | null;
}

export interface SpuriousItem {
  service: string;
  class: string;
  series: string;
  onset: string;
  ratio_p50: number;
  ratio_p99: number;
  /** step | transient (a burst closed, never paged) | drift. */
  shape: string;
  status: string;
}

export interface FleetScore {
  incidents: number;
  found_once: number;
  found_more: number;
  missed: number;
  /** Regressions that are no incident's, bursts closed as transient left out (counted below). */
  spurious: number;
  /** Regressions that are no incident's, closed as transient bursts (never paged). */
  spurious_transient: number;
  /** On no-change services, transient or not. */
  spurious_no_change: number;
  service_days: number;
  no_change_service_days: number;
  spurious_per_service_day: number;
  spurious_per_no_change_service_day: number;
  top1_right: number;
  top1_of: number;
  cohort_confined_right: number;
  cohort_confined_of: number;
  cohort_fleetwide_right: number;
  cohort_fleetwide_of: number;
  detect_minutes: { median: number | null; p90: number | null; max: number | null };
  per_kind: Record<
    string,
    { incidents: number; once: number; more: number; missed: number; top1: number }
  >;
  outcomes: IncidentOutcome[];
  spurious_items: SpuriousItem[];
}

/** The series a regression stands for: its own, plus any member series an incident-level item lists. */
function keysOf(r: Regression): string[] {
  const own = `${r.service}|${r.op}|${r.name}|${r.peer ?? ''}`;
  const members = (r as { members?: unknown }).members;
  const out = [own];
  if (Array.isArray(members))
    for (const m of members as {
      service?: string;
      op?: string;
      name?: string;
      peer?: string | null;
    }[])
      if (m && typeof m.service === 'string' && typeof m.name === 'string')
        out.push(`${m.service}|${m.op ?? r.op}|${m.name}|${m.peer ?? ''}`);
  return out;
}

function matches(inc: Incident, r: Regression): boolean {
  const onset = Date.parse(r.onset);
  if (onset < inc.changeAtMs - BEFORE_MS || onset > inc.lastChangeAtMs + AFTER_MS) return false;
  return keysOf(r).some((k) => inc.series.includes(k));
}

/**
 * The top suspect is the causing rollout: one of its markers is a posted marker of it (a suspect
 * may carry every marker of its rollout in `deploy_ids`), or a marker of the same kind, component
 * and version that reached the hosts that matter: for a kernel incident its moved hosts (two
 * rollouts to one kernel may be presented as one rollout's waves, as long as it names these hosts;
 * the other rollout's markers alone are wrong), for a service's rollout known only from
 * telemetry an inferred marker of that service.
 */
function suspectRight(inc: Incident, r: Regression, markerIds: Map<string, string>): boolean {
  const top = r.suspects[0];
  if (!top) return false;
  const posted = new Set(inc.cause.markerKeys.map((k) => markerIds.get(k)).filter(Boolean));
  const ids = top.deploy_ids?.length ? top.deploy_ids : [top.deploy_id];
  if (ids.some((id) => posted.has(id))) return true;
  const c = inc.cause;
  if (top.kind !== c.kind || top.to_version !== c.toVersion) return false;
  if (c.component && top.component && top.component !== c.component) return false;
  if (c.kind === 'kernel') return inc.regressedHosts.every((h) => top.hosts.includes(h));
  return top.source === 'inferred' && top.service === c.service;
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

/**
 * Confined incidents: the slow side is exactly the regressed hosts. Fleet-wide ones: no regressed
 * host is called fast. Never a host on both sides.
 */
function cohortRight(inc: Incident, r: Regression): boolean {
  const confined = inc.regressedHosts.length < inc.seriesHosts.length;
  const c = r.cohort;
  // No host is on both sides, whatever the incident.
  if (c && c.slow_hosts.some((h) => c.fast_hosts.includes(h))) return false;
  if (!confined) return !c || c.fast_hosts.every((h) => !inc.regressedHosts.includes(h));
  if (c) return sameSet(c.slow_hosts, inc.regressedHosts);
  return inc.regressedHosts.length === 1 && r.host === inc.regressedHosts[0];
}

function describeCohort(r: Regression): string | null {
  if (!r.cohort) return r.host ? `host ${r.host}` : null;
  const c = r.cohort;
  return `${c.attribute}: slow ${c.slow.join(',')} [${c.slow_hosts.length} hosts] / fast ${c.fast.join(',')} [${c.fast_hosts.length} hosts]`;
}

function quantile(xs: number[], q: number): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export function scoreFleet(fleet: Fleet, result: ReplayResult): FleetScore {
  const used = new Set<string>();
  const outcomes: IncidentOutcome[] = [];
  for (const inc of fleet.incidents) {
    const hits: SeenRegression[] = result.regressions
      .filter((s) => matches(inc, s.regression))
      .sort(
        (a, b) => a.firstSeenMs - b.firstSeenMs || a.regression.id.localeCompare(b.regression.id),
      );
    for (const h of hits) used.add(h.regression.id);
    const first = hits[0];
    const r = first?.regression;
    outcomes.push({
      id: inc.id,
      kind: inc.kind,
      size: inc.size,
      canary: inc.canary,
      regressed_hosts: inc.regressedHosts.length,
      series_hosts: inc.seriesHosts.length,
      found: hits.length,
      regressions: hits.map(
        (h) =>
          `${h.regression.id} ${h.regression.view} ${h.regression.name} @${Math.round((Date.parse(h.regression.onset) - fleet.t0) / MIN)}`,
      ),
      top_suspect_right: r ? suspectRight(inc, r, result.markerIds) : null,
      top_suspect: r?.suspects[0]
        ? `${r.suspects[0].kind} ${r.suspects[0].service ?? '-'} ${r.suspects[0].component ?? ''} → ${r.suspects[0].to_version ?? ''} (${r.suspects[0].source}, ${r.suspects[0].score.toFixed(2)}, ${r.suspects[0].hosts.length} hosts, ${inc.regressedHosts.filter((h) => r.suspects[0]!.hosts.includes(h)).length}/${inc.regressedHosts.length} regressed hosts named)`
        : null,
      cohort_right: r ? cohortRight(inc, r) : null,
      cohort: r ? describeCohort(r) : null,
      detect_minutes: first ? (first.firstSeenMs - inc.changeAtMs) / MIN : null,
      onset_error_minutes: r ? Math.round((Date.parse(r.onset) - inc.changeAtMs) / MIN) : null,
    });
  }
  const spuriousItems: SpuriousItem[] = result.regressions
    .filter((s) => !used.has(s.regression.id))
    .map(({ regression: r }) => ({
      service: r.service,
      class: fleet.classOf(r.service) ?? 'unknown',
      series: `${r.op} ${r.view} ${r.name}${r.peer ? ` -> ${r.peer}` : ''}`,
      onset: `minute ${Math.round((Date.parse(r.onset) - fleet.t0) / MIN)}`,
      ratio_p50: r.ratio_p50,
      ratio_p99: r.ratio_p99,
      shape: r.shape ?? 'step',
      status: r.status,
    }));
  const spuriousSteps = spuriousItems.filter((s) => s.shape !== 'transient');
  const days = fleet.dataMinutes / (24 * 60);
  const noChange = fleet.services.filter((s) => s.cls === 'steady').length;
  const spuriousNoChange = spuriousItems.filter((s) => s.class === 'steady').length;
  const found = outcomes.filter((o) => o.found > 0);
  const confined = found.filter((o) => o.regressed_hosts < o.series_hosts);
  const fleetwide = found.filter((o) => o.regressed_hosts >= o.series_hosts);
  const detect = found.map((o) => o.detect_minutes!);
  const perKind: FleetScore['per_kind'] = {};
  for (const o of outcomes) {
    const k = (perKind[o.kind] ??= { incidents: 0, once: 0, more: 0, missed: 0, top1: 0 });
    k.incidents++;
    if (o.found === 1) k.once++;
    else if (o.found > 1) k.more++;
    else k.missed++;
    if (o.top_suspect_right) k.top1++;
  }
  return {
    incidents: outcomes.length,
    found_once: outcomes.filter((o) => o.found === 1).length,
    found_more: outcomes.filter((o) => o.found > 1).length,
    missed: outcomes.filter((o) => o.found === 0).length,
    spurious: spuriousSteps.length,
    spurious_transient: spuriousItems.length - spuriousSteps.length,
    spurious_no_change: spuriousNoChange,
    service_days: fleet.services.length * days,
    no_change_service_days: noChange * days,
    spurious_per_service_day: spuriousSteps.length / (fleet.services.length * days),
    spurious_per_no_change_service_day: noChange ? spuriousNoChange / (noChange * days) : 0,
    top1_right: found.filter((o) => o.top_suspect_right).length,
    top1_of: found.length,
    cohort_confined_right: confined.filter((o) => o.cohort_right).length,
    cohort_confined_of: confined.length,
    cohort_fleetwide_right: fleetwide.filter((o) => o.cohort_right).length,
    cohort_fleetwide_of: fleetwide.length,
    detect_minutes: {
      median: quantile(detect, 0.5),
      p90: quantile(detect, 0.9),
      max: quantile(detect, 1),
    },
    per_kind: perKind,
    outcomes,
    spurious_items: spuriousItems,
  };
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(0)} %` : 'n/a');

/** The printed report of one seed. */
export function formatScore(seed: number, s: FleetScore, verbose = true): string {
  const lines: string[] = [];
  lines.push(`seed ${seed}: ${s.incidents} incidents`);
  lines.push(`  found once ${s.found_once}, more than once ${s.found_more}, missed ${s.missed}`);
  lines.push(
    `  spurious regressions: ${s.spurious} (${s.spurious_per_service_day.toFixed(2)} per service-day over ${s.service_days.toFixed(1)}), and ${s.spurious_transient} bursts closed as transient (never paged); on no-change services (any shape) ${s.spurious_no_change} (${s.spurious_per_no_change_service_day.toFixed(2)} per service-day over ${s.no_change_service_days.toFixed(1)})`,
  );
  lines.push(
    `  top-1 suspect right: ${s.top1_right}/${s.top1_of} (${pct(s.top1_right, s.top1_of)})`,
  );
  lines.push(
    `  cohort right: confined ${s.cohort_confined_right}/${s.cohort_confined_of}, fleet-wide (no regressed host on the fast side) ${s.cohort_fleetwide_right}/${s.cohort_fleetwide_of}`,
  );
  const d = s.detect_minutes;
  lines.push(
    `  change -> regression (data minutes): median ${d.median ?? '-'}, p90 ${d.p90 ?? '-'}, max ${d.max ?? '-'}`,
  );
  lines.push(
    '  per kind: ' +
      Object.entries(s.per_kind)
        .map(
          ([k, v]) =>
            `${k} ${v.once}/${v.incidents} once (${v.more} more, ${v.missed} missed, top-1 ${v.top1})`,
        )
        .join('; '),
  );
  if (verbose) {
    for (const o of s.outcomes)
      lines.push(
        `    ${o.found === 1 ? 'ok  ' : o.found > 1 ? `×${o.found}  ` : 'MISS'} ${o.id} [${o.size}${o.canary ? ', canary' : ''}] ` +
          (o.found
            ? `after ${o.detect_minutes} min, onset ${o.onset_error_minutes! >= 0 ? '+' : ''}${o.onset_error_minutes} min; top-1 ${o.top_suspect_right ? 'right' : 'WRONG'} (${o.top_suspect ?? 'none'}); cohort ${o.cohort_right ? 'right' : 'WRONG'} (${o.cohort ?? 'none'}); ${o.regressions.join(' | ')}`
            : ''),
      );
    for (const x of s.spurious_items)
      lines.push(
        `    spurious [${x.class}] ${x.service} ${x.series} ${x.onset} ×${x.ratio_p50.toFixed(2)} p50 ×${x.ratio_p99.toFixed(2)} p99 (${x.shape}, ${x.status})`,
      );
  }
  return lines.join('\n');
}
