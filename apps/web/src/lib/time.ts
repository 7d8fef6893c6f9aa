/**
 * One time format for the whole UI: 24-hour, always with its time zone
 * ("Nov 20, 10:43 UTC", "Nov 20, 11:43 GMT+1"), in the browser's zone or in
 * UTC (the toggle in the top bar, remembered in localStorage). A paged
 * engineer comparing a chart with a log line must never guess the zone.
 */
import { useSyncExternalStore } from 'react';

export type TimeZoneMode = 'local' | 'utc';

const STORAGE_KEY = 'onset.tz';
const listeners = new Set<() => void>();

function storedMode(): TimeZoneMode {
  try {
    return globalThis.localStorage?.getItem(STORAGE_KEY) === 'utc' ? 'utc' : 'local';
  } catch {
    return 'local';
  }
}

let mode: TimeZoneMode = storedMode();

export function timeZoneMode(): TimeZoneMode {
  return mode;
}

export function setTimeZoneMode(next: TimeZoneMode): void {
  if (next === mode) return;
  mode = next;
  try {
    globalThis.localStorage?.setItem(STORAGE_KEY, next);
  } catch {
    /* private mode: the choice lasts for this page only */
  }
  for (const l of listeners) l();
}

/** The current mode; components using it re-render when it is toggled. */
export function useTimeZoneMode(): TimeZoneMode {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    timeZoneMode,
    timeZoneMode,
  );
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** The browser zone's short name at an instant ("CET", "GMT+1", "PDT"), cached per UTC offset. */
const zoneNames = new Map<number, string>();
function localZoneName(d: Date): string {
  const offset = d.getTimezoneOffset();
  let name = zoneNames.get(offset);
  if (name === undefined) {
    try {
      name =
        new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
          .formatToParts(d)
          .find((p) => p.type === 'timeZoneName')?.value ?? offsetName(offset);
    } catch {
      name = offsetName(offset);
    }
    // "GMT" alone for an offset of 0 reads as UTC everywhere else in the UI.
    if (offset === 0 && /^(GMT|UTC)$/.test(name)) name = 'UTC';
    zoneNames.set(offset, name);
  }
  return name;
}

function offsetName(offsetMin: number): string {
  if (offsetMin === 0) return 'UTC';
  const east = -offsetMin;
  const h = Math.floor(Math.abs(east) / 60);
  const m = Math.abs(east) % 60;
  return `UTC${east >= 0 ? '+' : '−'}${h}${m ? ':' + pad(m) : ''}`;
}

interface Parts {
  month: number;
  day: number;
  hours: number;
  minutes: number;
  seconds: number;
  zone: string;
}

function partsOf(ms: number, m: TimeZoneMode): Parts {
  const d = new Date(ms);
  return m === 'utc'
    ? {
        month: d.getUTCMonth(),
        day: d.getUTCDate(),
        hours: d.getUTCHours(),
        minutes: d.getUTCMinutes(),
        seconds: d.getUTCSeconds(),
        zone: 'UTC',
      }
    : {
        month: d.getMonth(),
        day: d.getDate(),
        hours: d.getHours(),
        minutes: d.getMinutes(),
        seconds: d.getSeconds(),
        zone: localZoneName(d),
      };
}

export interface InstantOptions {
  seconds?: boolean;
  /** Leave the zone off (only where a heading nearby already states it, e.g. a chart legend). */
  zone?: boolean;
  /** Override the toggle (tests, tooltips showing the other zone). */
  mode?: TimeZoneMode;
}

/** "Nov 20, 10:43 UTC" — the one date-time format of the UI. */
export function formatInstant(ms: number, opts: InstantOptions | boolean = {}): string {
  const o: InstantOptions = typeof opts === 'boolean' ? { seconds: opts } : opts;
  if (!Number.isFinite(ms)) return '–';
  const p = partsOf(ms, o.mode ?? mode);
  const time = `${pad(p.hours)}:${pad(p.minutes)}${o.seconds ? ':' + pad(p.seconds) : ''}`;
  return `${MONTHS[p.month]} ${p.day}, ${time}${o.zone === false ? '' : ' ' + p.zone}`;
}

/** "10:43:05 UTC" — a time of day (today's refresh stamp, a cursor readout). */
export function formatClock(ms: number, opts: Omit<InstantOptions, 'seconds'> = {}): string {
  if (!Number.isFinite(ms)) return '–';
  const p = partsOf(ms, opts.mode ?? mode);
  const time = `${pad(p.hours)}:${pad(p.minutes)}:${pad(p.seconds)}`;
  return opts.zone === false ? time : `${time} ${p.zone}`;
}

/** The same instant in the other zone and in RFC 3339, for a title/tooltip. */
export function instantTitle(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  const other: TimeZoneMode = mode === 'utc' ? 'local' : 'utc';
  return `${formatInstant(ms, { seconds: true, mode: other })} · ${new Date(ms).toISOString()}`;
}

/**
 * Labels for a time axis's ticks (epoch ms; null where the chart hides one):
 * 24-hour "07:30" (with seconds when ticks are under a minute apart), the
 * date under the first tick and under each tick that starts a new day, and
 * the zone under the first, so no axis is read in a guessed zone or a
 * 12-hour clock. Ticks a day or more apart are dates.
 */
export function timeAxisLabels(
  ticksMs: ReadonlyArray<number | null | undefined>,
  incrMs: number,
  m: TimeZoneMode = mode,
): string[] {
  let prevDay = '';
  let first = true;
  return ticksMs.map((t) => {
    if (t === null || t === undefined || !Number.isFinite(t)) return '';
    const p = partsOf(t, m);
    const day = `${MONTHS[p.month]} ${p.day}`;
    const newDay = day !== prevDay;
    prevDay = day;
    const zone = first ? ` ${p.zone}` : '';
    const wasFirst = first;
    first = false;
    if (incrMs >= 24 * 3600_000) return `${day}${zone}`;
    const time = `${pad(p.hours)}:${pad(p.minutes)}${incrMs < 60_000 ? ':' + pad(p.seconds) : ''}`;
    return wasFirst || newDay ? `${time}\n${day}${zone}` : time;
  });
}
