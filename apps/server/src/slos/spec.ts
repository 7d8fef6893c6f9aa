import { Type, type Static } from '@sinclair/typebox';
import { TIER_NAMES, parseSloWindow, type SloWindow, type TierName } from '@onset/core';
import { OpSchema, ViewSchema } from '@onset/contract';
import { badRequest } from '../http/errors.ts';

export const AlertTiersSchema = Type.Object(
  {
    page_1h: Type.Optional(
      Type.Boolean({ description: 'page at 14.4× (30d-equivalent) over 1 h and 5 m' }),
    ),
    page_6h: Type.Optional(Type.Boolean({ description: 'page at 6× over 6 h and 30 m' })),
    ticket_1d: Type.Optional(Type.Boolean({ description: 'ticket at 3× over 1 d and 2 h' })),
    ticket_3d: Type.Optional(Type.Boolean({ description: 'ticket at 1× over 3 d and 6 h' })),
  },
  { additionalProperties: false },
);

/** The JSON body of POST/PUT /api/v1/slos (api.md "SLOs", extended). */
export const SloInputSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    op: Type.Optional(OpSchema),
    view: Type.Optional(ViewSchema),
    name_match: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: 'regular expression on the series name (PostgreSQL ~)',
      }),
    ),
    peer: Type.Optional(Type.String({ maxLength: 256 })),
    series_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,18}$',
        description: 'watch exactly this series; threshold defaults to the suggestion',
      }),
    ),
    threshold_ms: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 30 * 86_400_000 })),
    objective: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
    window: Type.Optional(
      Type.String({
        maxLength: 32,
        description: 'rolling "28d", "7d", "36h"…; calendar month "1M"',
      }),
    ),
    calendar: Type.Optional(
      Type.Boolean({ description: 'calendar window: 1d, 1w or 1M (1M is always calendar)' }),
    ),
    time_zone: Type.Optional(
      Type.String({ maxLength: 64, description: 'IANA zone for calendar windows; default UTC' }),
    ),
    alert_tiers: Type.Optional(AlertTiersSchema),
    min_events: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    min_bad_events: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);
export type SloInput = Static<typeof SloInputSchema>;

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

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Threshold in µs, kept to the nanosecond so 0.3 ms is 300 µs, not 300.00000000000006. */
export function thresholdUs(ms: number): number {
  return Math.round(ms * 1_000_000) / 1000;
}
