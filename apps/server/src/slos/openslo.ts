/**
 * OpenSLO v1 import/export for threshold latency SLOs.
 *
 * Accepted: `kind: SLO` documents (one or more in a YAML stream) whose
 * indicator is inline or an `indicatorRef` to a `kind: SLI` document in the
 * same stream, with a `thresholdMetric` whose `metricSource.type` is `Onset`
 * and whose `metricSource.spec` holds the series selector (service, op, view,
 * name_match, peer or series_id) and optionally `unit` (ms default, us, s).
 * `budgetingMethod: Occurrences`; objectives with `op: lte`, `value` (the
 * threshold) and `target`; `timeWindow` rolling (`isRolling: true`, any
 * duration) or calendar (`1M`, `1w`, `1d` with `calendar.timeZone`).
 */
import { Document, Scalar, parseAllDocuments, visit } from 'yaml';
import { badRequest } from '../http/errors.ts';
import { OPS as OP_VALUES, VIEWS as VIEW_VALUES } from '@onset/contract';
import { tiersFrom, windowFrom, type SloSpec } from './spec.ts';
import type { SloJson } from './store.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const OPS = new Set<string>(OP_VALUES);
const VIEWS = new Set<string>(VIEW_VALUES);
const UNIT_TO_MS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000 };

function str(v: unknown, field: string, required = false): string | undefined {
  if (v === undefined || v === null) {
    if (required) throw badRequest(`OpenSLO: ${field} is required`);
    return undefined;
  }
  if (typeof v !== 'string' && typeof v !== 'number')
    throw badRequest(`OpenSLO: ${field} must be a string`);
  return String(v);
}

/** OpenSLO durations use m for minutes and M/Q/Y for calendar units. */
function rollingDuration(d: string): string {
  const m = /^(\d+)(m|h|d|w)$/.exec(d);
  if (!m)
    throw badRequest(
      `OpenSLO: rolling timeWindow duration "${d}" must look like 28d, 4w, 36h or 90m`,
    );
  return d;
}

function labelsOf(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObj(v)) return out;
  for (const [k, val] of Object.entries(v))
    out[k] = Array.isArray(val) ? val.map(String).join(',') : String(val);
  return out;
}

export function parseOpenSlo(text: string): SloSpec[] {
  let docs: unknown[];
  try {
    const parsed = parseAllDocuments(text);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    for (const d of list) if (d.errors.length) throw new Error(d.errors[0]!.message);
    docs = list.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    throw badRequest(`invalid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!docs.length) throw badRequest('OpenSLO: empty document');
  const slis = new Map<string, Obj>();
  const slos: Obj[] = [];
  for (const d of docs) {
    if (!isObj(d)) throw badRequest('OpenSLO: each document must be a mapping');
    if (d.apiVersion !== 'openslo/v1')
      throw badRequest(`OpenSLO: apiVersion must be "openslo/v1", got "${String(d.apiVersion)}"`);
    if (d.kind === 'SLI') {
      const name = str(isObj(d.metadata) ? d.metadata.name : undefined, 'SLI metadata.name', true)!;
      slis.set(name, d);
    } else if (d.kind === 'SLO') slos.push(d);
    else if (
      d.kind === 'AlertPolicy' ||
      d.kind === 'AlertCondition' ||
      d.kind === 'AlertNotificationTarget' ||
      d.kind === 'Service'
    )
      continue;
    else throw badRequest(`OpenSLO: unsupported kind "${String(d.kind)}"`);
  }
  if (!slos.length) throw badRequest('OpenSLO: no kind: SLO document');
  return slos.flatMap((d) => specsOf(d, slis, text));
}

function specsOf(d: Obj, slis: Map<string, Obj>, text: string): SloSpec[] {
  const meta = isObj(d.metadata) ? d.metadata : {};
  const spec = isObj(d.spec) ? d.spec : null;
  if (!spec) throw badRequest('OpenSLO: SLO spec is required');
  const baseName =
    str(meta.displayName, 'metadata.displayName') ?? str(meta.name, 'metadata.name', true)!;

  let sli: Obj | undefined;
  if (isObj(spec.indicator)) sli = spec.indicator;
  else if (spec.indicatorRef !== undefined) {
    const ref = str(spec.indicatorRef, 'spec.indicatorRef', true)!;
    sli = slis.get(ref);
    if (!sli)
      throw badRequest(
        `OpenSLO: indicatorRef "${ref}" names no kind: SLI document in this request`,
      );
  } else throw badRequest('OpenSLO: spec.indicator or spec.indicatorRef is required');
  const sliSpec = isObj(sli.spec) ? sli.spec : null;
  if (!sliSpec || !isObj(sliSpec.thresholdMetric)) {
    throw badRequest(
      'OpenSLO: only threshold SLIs are supported (indicator spec.thresholdMetric); ratioMetric is not a latency threshold',
    );
  }
  const source = isObj(sliSpec.thresholdMetric.metricSource)
    ? sliSpec.thresholdMetric.metricSource
    : null;
  if (!source || String(source.type).toLowerCase() !== 'onset')
    throw badRequest('OpenSLO: thresholdMetric.metricSource.type must be "Onset"');
  const sel = isObj(source.spec)
    ? source.spec
    : isObj(source.metricSourceSpec)
      ? source.metricSourceSpec
      : {};
  const service =
    str(sel.service, 'metricSource.spec.service') ?? str(spec.service, 'spec.service');
  if (!service) throw badRequest('OpenSLO: spec.service or metricSource.spec.service is required');
  const op = str(sel.op, 'metricSource.spec.op');
  if (op !== undefined && !OPS.has(op))
    throw badRequest(`OpenSLO: op must be one of ${[...OPS].join(', ')}`);
  const view = str(sel.view, 'metricSource.spec.view');
  if (view !== undefined && !VIEWS.has(view))
    throw badRequest(`OpenSLO: view must be one of ${[...VIEWS].join(', ')}`);
  const unit = str(sel.unit, 'metricSource.spec.unit') ?? 'ms';
  const unitMs = UNIT_TO_MS[unit];
  if (unitMs === undefined) throw badRequest('OpenSLO: metricSource.spec.unit must be us, ms or s');

  const budgeting = str(spec.budgetingMethod, 'spec.budgetingMethod') ?? 'Occurrences';
  if (budgeting !== 'Occurrences')
    throw badRequest(`OpenSLO: budgetingMethod "${budgeting}" is not supported; use Occurrences`);

  const tw = Array.isArray(spec.timeWindow) ? spec.timeWindow[0] : spec.timeWindow;
  if (!isObj(tw)) throw badRequest('OpenSLO: spec.timeWindow is required');
  const duration = str(tw.duration, 'timeWindow.duration', true)!;
  const rolling = tw.isRolling !== false;
  const cal = isObj(tw.calendar) ? tw.calendar : {};
  const window = rolling
    ? windowFrom(rollingDuration(duration), false, undefined)
    : windowFrom(duration, true, str(cal.timeZone, 'timeWindow.calendar.timeZone') ?? 'UTC');

  const objectives = Array.isArray(spec.objectives) ? spec.objectives : [];
  if (!objectives.length) throw badRequest('OpenSLO: spec.objectives needs at least one objective');
  const labels = labelsOf(meta.labels);
  const annotations = isObj(meta.annotations) ? meta.annotations : {};
  const minEvents = Number(annotations['onset.dev/min-events'] ?? 20);
  return objectives.map((o, i): SloSpec => {
    if (!isObj(o)) throw badRequest(`OpenSLO: objectives[${i}] must be a mapping`);
    const opName = str(o.op, `objectives[${i}].op`) ?? 'lte';
    if (opName !== 'lte')
      throw badRequest(
        `OpenSLO: objectives[${i}].op must be "lte": good events are at or under the threshold`,
      );
    const value = Number(o.value);
    if (!(value > 0))
      throw badRequest(`OpenSLO: objectives[${i}].value must be a positive latency threshold`);
    const t =
      o.target !== undefined
        ? Number(o.target)
        : o.targetPercent !== undefined
          ? Number(o.targetPercent) / 100
          : NaN;
    if (!(t > 0 && t < 1))
      throw badRequest(`OpenSLO: objectives[${i}].target must be between 0 and 1 (e.g. 0.99)`);
    const label = str(o.displayName, `objectives[${i}].displayName`);
    return {
      name:
        objectives.length > 1
          ? `${baseName} (${label ?? `≤ ${value} ${unit}`})`.slice(0, 200)
          : baseName.slice(0, 200),
      description: str(spec.description, 'spec.description') ?? null,
      service,
      op: op ?? null,
      view: view ?? null,
      name_match: str(sel.name_match ?? sel.nameMatch, 'metricSource.spec.name_match') ?? null,
      peer: str(sel.peer, 'metricSource.spec.peer') ?? null,
      series_id: str(sel.series_id ?? sel.seriesId, 'metricSource.spec.series_id') ?? null,
      threshold_ms: value * unitMs,
      objective: t,
      window,
      alert_tiers: tiersFrom(undefined),
      min_events: Number.isInteger(minEvents) && minEvents > 0 ? minEvents : 20,
      min_bad_events: 2,
      labels,
      source: 'openslo',
      openslo: text,
    };
  });
}

/** An SLO as an OpenSLO v1 document (the inverse of parseOpenSlo for one objective). */
export function toOpenSlo(slo: SloJson): string {
  const metricSpec: Record<string, string> = { service: slo.service, unit: 'ms' };
  if (slo.op) metricSpec.op = slo.op;
  if (slo.view) metricSpec.view = slo.view;
  if (slo.name_match) metricSpec.name_match = slo.name_match;
  if (slo.peer) metricSpec.peer = slo.peer;
  if (slo.series_id) metricSpec.series_id = slo.series_id;
  const slug =
    slo.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 50) || `slo-${slo.id}`;
  const doc = {
    apiVersion: 'openslo/v1',
    kind: 'SLO',
    metadata: {
      name: slug,
      displayName: slo.name,
      ...(Object.keys(slo.labels).length ? { labels: slo.labels } : {}),
    },
    spec: {
      ...(slo.description ? { description: slo.description } : {}),
      service: slo.service,
      indicator: {
        metadata: { name: `${slug}-latency` },
        spec: { thresholdMetric: { metricSource: { type: 'Onset', spec: metricSpec } } },
      },
      timeWindow: [
        slo.calendar
          ? {
              duration: slo.window === 'month' ? '1M' : slo.window,
              isRolling: false,
              calendar: { startTime: '2020-01-01 00:00:00', timeZone: slo.time_zone },
            }
          : { duration: slo.window, isRolling: true },
      ],
      budgetingMethod: 'Occurrences',
      objectives: [{ op: 'lte', value: slo.threshold_ms, target: slo.objective }],
    },
  };
  return yamlText(doc);
}

/** Characters YAML does not allow raw in a document (outside its printable set). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NON_PRINTABLE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]/g;

/**
 * YAML text of a value that any YAML parser reads back. The yaml library
 * writes C1 control characters (U+0080-U+009F) and U+FFFE/U+FFFF raw, which
 * YAML forbids; a name holding one made the export unreadable. Such strings
 * (keys too) are written double-quoted, where these characters are escaped.
 */
function yamlText(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Scalar(_key, node: Scalar) {
      if (typeof node.value === 'string' && new RegExp(NON_PRINTABLE.source).test(node.value))
        node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  // Only the double-quoted scalars above hold these characters, so escaping them in the text is safe.
  return doc
    .toString()
    .replace(NON_PRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
