/**
 * SLO windows: rolling (any length) and calendar (day, week, month in a time
 * zone), and how a window is read from per-minute and per-hour counters.
 */
import { parseDuration } from '@onset/contract';
import { HOUR_MS, MINUTE_MS, DAY_MS } from './rates.ts';

export type CalendarUnit = 'day' | 'week' | 'month';

export type SloWindow =
  | { kind: 'rolling'; ms: number; text: string }
  | { kind: 'calendar'; unit: CalendarUnit; timeZone: string; text: string };

export const MIN_WINDOW_MS = 5 * MINUTE_MS;
export const MAX_WINDOW_MS = 400 * DAY_MS;

const CALENDAR_ALIASES: Record<string, CalendarUnit> = {
  '1M': 'month',
  month: 'month',
  calendar_month: 'month',
  '1w': 'week',
  week: 'week',
  calendar_week: 'week',
  '1d': 'day',
  day: 'day',
  calendar_day: 'day',
};

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parse a window: "28d", "7d", "36h", "90d" are rolling; "1M" / "month" is a
 * calendar month, and with `calendar` "1w"/"1d" are calendar weeks (from
 * Monday) and days. Throws an Error with a message fit for a 400.
 */
export function parseSloWindow(
  text: string,
  opts: { calendar?: boolean; timeZone?: string } = {},
): SloWindow {
  const t = text.trim();
  const tz = opts.timeZone ?? 'UTC';
  if (!isValidTimeZone(tz)) throw new Error(`unknown time zone "${tz}"`);
  const unit = CALENDAR_ALIASES[t];
  if (unit === 'month' || (opts.calendar && unit))
    return { kind: 'calendar', unit, timeZone: tz, text: t };
  if (opts.calendar) throw new Error(`calendar windows are 1d, 1w or 1M, not "${t}"`);
  let ms: number;
  try {
    ms = parseDuration(t);
  } catch {
    throw new Error(
      `window "${t}" is neither a duration (e.g. 28d, 7d, 36h) nor a calendar month (1M)`,
    );
  }
  if (ms < MIN_WINDOW_MS || ms > MAX_WINDOW_MS)
    throw new Error(`window must be between 5m and 400d, got "${t}"`);
  if (ms % MINUTE_MS !== 0) throw new Error(`window must be whole minutes, got "${t}"`);
  return { kind: 'rolling', ms, text: t };
}

interface ZonedParts {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 = Monday
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(tz, f);
  }
  return f;
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function zonedParts(ms: number, tz: string): ZonedParts {
  const p: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(new Date(ms))) p[part.type] = part.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour) % 24,
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: WEEKDAYS.indexOf(p.weekday!),
  };
}

/** UTC offset (ms) of a time zone at an instant. */
function offsetAt(ms: number, tz: string): number {
  const p = zonedParts(ms, tz);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** The instant a wall-clock time occurs in a time zone (the later one across a DST gap). */
export function zonedTimeToUtc(year: number, month: number, day: number, tz: string): number {
  const wall = Date.UTC(year, month - 1, day);
  let t = wall - offsetAt(wall, tz);
  const o2 = offsetAt(t, tz);
  if (wall - o2 !== t) t = wall - o2;
  return t;
}

/** Start and end (exclusive) of the calendar period containing `now`. */
export function calendarPeriod(
  now: number,
  unit: CalendarUnit,
  tz: string,
): { start: number; end: number } {
  const p = zonedParts(now, tz);
  if (unit === 'month') {
    const start = zonedTimeToUtc(p.year, p.month, 1, tz);
    const end =
      p.month === 12
        ? zonedTimeToUtc(p.year + 1, 1, 1, tz)
        : zonedTimeToUtc(p.year, p.month + 1, 1, tz);
    return { start, end };
  }
  // Day arithmetic through UTC dates so month/year rollovers come out right.
  const back = unit === 'week' ? p.weekday : 0;
  const first = new Date(Date.UTC(p.year, p.month - 1, p.day - back));
  const next = new Date(Date.UTC(p.year, p.month - 1, p.day - back + (unit === 'week' ? 7 : 1)));
  return {
    start: zonedTimeToUtc(first.getUTCFullYear(), first.getUTCMonth() + 1, first.getUTCDate(), tz),
    end: zonedTimeToUtc(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), tz),
  };
}

const floorMinute = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS;
const ceilHour = (ms: number) => Math.ceil(ms / HOUR_MS) * HOUR_MS;

/**
 * The end (exclusive) of every window evaluated at `now`: the end of the
 * current minute, so the newest (partial) minute counts.
 */
export function windowEnd(now: number): number {
  return floorMinute(now) + MINUTE_MS;
}

/** The span [start, end) an SLO's compliance window covers at `now`, and its nominal length. */
export function sloWindowSpan(
  w: SloWindow,
  now: number,
): { start: number; end: number; lengthMs: number } {
  const end = windowEnd(now);
  if (w.kind === 'rolling') return { start: end - w.ms, end, lengthMs: w.ms };
  const p = calendarPeriod(now, w.unit, w.timeZone);
  return { start: floorMinute(p.start), end, lengthMs: p.end - p.start };
}

export interface CounterPiece {
  table: 'minute' | 'hour' | 'day';
  from: number;
  to: number;
}

const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;

/** Tile [s, e) coarsest-first: whole UTC days, then whole hours, then minutes at the edges. */
function tile(s: number, e: number, out: CounterPiece[], level: 0 | 1 | 2): void {
  if (s >= e) return;
  if (level === 2) {
    out.push({ table: 'minute', from: s, to: e });
    return;
  }
  const unit = level === 0 ? DAY_MS : HOUR_MS;
  const a = ceilTo(s, unit);
  const b = floorTo(e, unit);
  if (a >= b) return tile(s, e, out, (level + 1) as 1 | 2);
  tile(s, a, out, (level + 1) as 1 | 2);
  out.push({ table: level === 0 ? 'day' : 'hour', from: a, to: b });
  tile(b, e, out, (level + 1) as 1 | 2);
}

/**
 * Split [start, end) into reads of the per-day, per-hour and per-minute
 * counters: whole UTC days from the daily table, whole hours from the
 * hourly one, the ragged edges from the minute table. Minute counters are
 * kept only from `minuteHorizon` on, so a start older than that is rounded
 * up to the next whole hour; the returned `start` says where the window
 * really began.
 */
export function counterPieces(
  start: number,
  end: number,
  minuteHorizon: number,
): { pieces: CounterPiece[]; start: number } {
  let s = floorMinute(start);
  const e = floorMinute(end);
  if (s < minuteHorizon && s % HOUR_MS !== 0) s = Math.min(ceilHour(s), e);
  const pieces: CounterPiece[] = [];
  tile(s, e, pieces, 0);
  return { pieces, start: s };
}
