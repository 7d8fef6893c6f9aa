import { TIER_NAMES, parseSloWindow, type SloWindow, type TierName } from '@onset/core';
import type { SloInput } from '@onset/contract';
import { badRequest } from '../http/errors.ts';

/** Which series an SLO watches; the same columns in a spec, a stored row and the API JSON. */
export interface SloSelector {
  service: string;
  op: string | null;
  view: string | null;
  name_match: string | null;
  peer: string | null;
  series_id: string | null;
}

/** What a spec, a stored row and the API JSON of an SLO all hold, under the same names. */
export interface SloCommon extends SloSelector {
  name: string;
  description: string | null;
  objective: number;
  min_events: number;
  min_bad_events: number;
  labels: Record<string, string>;
}

/** A validated SLO spec, as stored. */
export interface SloSpec extends SloCommon {
  threshold_ms: number;
  window: SloWindow;
  alert_tiers: Record<TierName, boolean>;
  source: 'api' | 'openslo' | 'suggestion';
  openslo: string | null;
}

/** The labels of a series, as the selector of an SLO bound to exactly that series. */
export function selectorOfSeries(series: {
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string | null;
}): Omit<SloSelector, 'series_id'> {
  return {
    service: series.service,
    op: series.op,
    view: series.view,
    name_match: `^${escapeRegex(series.name)}$`,
    peer: series.peer ?? '',
  };
}

export function tiersFrom(
  input: Partial<Record<TierName, boolean>> | undefined,
): Record<TierName, boolean> {
  const out = {} as Record<TierName, boolean>;
  for (const t of TIER_NAMES) out[t] = input?.[t] !== false;
  return out;
}

export function windowFrom(
  window: string,
  calendar: boolean | undefined,
  timeZone: string | undefined,
): SloWindow {
  try {
    return parseSloWindow(window, { calendar, timeZone });
  } catch (e) {
    throw badRequest(`window: ${(e as Error).message}`);
  }
}

/**
 * Turn a JSON body into a spec. `series` supplies the labels when the body
 * names a series_id; `suggested` the threshold when none was given.
 */
export function specFromJson(
  input: SloInput,
  series?: { service: string; op: string; view: string; name: string; peer: string | null } | null,
  suggestedThresholdMs?: number | null,
): SloSpec {
  let selector: Omit<SloSelector, 'series_id' | 'service'> & { service: string | undefined } = {
    service: input.service,
    op: input.op ?? null,
    view: input.view ?? null,
    name_match: input.name_match ?? null,
    peer: input.peer ?? null,
  };
  if (input.series_id) {
    if (!series) throw badRequest(`series ${input.series_id} does not exist`);
    if (input.service && input.service !== series.service)
      throw badRequest('service does not match series_id');
    selector = selectorOfSeries(series);
  }
  const { service } = selector;
  if (!service) throw badRequest('service is required (or series_id)');
  const threshold = input.threshold_ms ?? suggestedThresholdMs ?? undefined;
  if (threshold === undefined) {
    throw badRequest(
      input.series_id
        ? 'threshold_ms is required: the series has no history to suggest one from'
        : 'threshold_ms is required',
    );
  }
  // Stored in µs (thresholdUs): a positive threshold under a nanosecond would be stored as 0.
  if (thresholdUs(threshold) <= 0) throw badRequest('threshold_ms must be at least 0.000001');
  const objective = input.objective ?? (input.series_id ? 0.99 : undefined);
  if (objective === undefined) throw badRequest('objective is required (e.g. 0.99)');
  const window = windowFrom(input.window ?? '28d', input.calendar, input.time_zone);
  const name =
    input.name ??
    (input.series_id && series
      ? `${series.service} ${series.op} ${series.name}`.slice(0, 200)
      : undefined);
  if (!name) throw badRequest('name is required');
  return {
    name,
    description: input.description ?? null,
    ...selector,
    service,
    series_id: input.series_id ?? null,
    threshold_ms: threshold,
    objective,
    window,
    alert_tiers: tiersFrom(input.alert_tiers),
    min_events: input.min_events ?? 20,
    min_bad_events: input.min_bad_events ?? 2,
    labels: input.labels ?? {},
    source: input.series_id && input.threshold_ms === undefined ? 'suggestion' : 'api',
    openslo: null,
  };
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Threshold in µs, kept to the nanosecond so 0.3 ms is 300 µs, not 300.00000000000006. */
export function thresholdUs(ms: number): number {
  return Math.round(ms * 1_000_000) / 1000;
}
