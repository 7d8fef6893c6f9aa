/**
 * Time ranges as they live in the URL: `from`/`to` are `now`, `now-6h` style
 * relative times (so a shared link keeps meaning "the last 6 hours") or
 * absolute RFC 3339 times (after a zoom, so the link shows that exact window).
 * The server accepts the same strings, so they pass through unchanged.
 */
import { resolveTime } from '@onset/contract';
import { formatInstant, timeZoneMode } from '../lib/time.ts';

/** The UI's one date-time format lives in lib/time.ts; re-exported for the range helpers' callers. */
export { formatInstant };

export interface RangeText {
  from: string;
  to: string;
}

export const DEFAULT_RANGE: RangeText = { from: 'now-6h', to: 'now' };

export const PRESETS: ReadonlyArray<{ label: string; short: string; from: string }> = [
  { label: 'Last 15 minutes', short: '15m', from: 'now-15m' },
  { label: 'Last 30 minutes', short: '30m', from: 'now-30m' },
  { label: 'Last 1 hour', short: '1h', from: 'now-1h' },
  { label: 'Last 6 hours', short: '6h', from: 'now-6h' },
  { label: 'Last 24 hours', short: '24h', from: 'now-24h' },
  { label: 'Last 7 days', short: '7d', from: 'now-7d' },
  { label: 'Last 30 days', short: '30d', from: 'now-30d' },
];

export interface ResolvedRange {
  fromMs: number;
  toMs: number;
}

/** Resolve a URL range; invalid or reversed input falls back to the default so a bad link still shows something. */
export function resolveRange(r: RangeText, now: number): ResolvedRange & { valid: boolean } {
  const fromMs = resolveTime(r.from, now);
  const toMs = resolveTime(r.to, now);
  if (Number.isFinite(fromMs) && Number.isFinite(toMs) && fromMs < toMs)
    return { fromMs, toMs, valid: true };
  return { fromMs: resolveTime(DEFAULT_RANGE.from, now), toMs: now, valid: false };
}

export function isRelative(r: RangeText): boolean {
  return r.to.trim() === 'now' && /^now-/.test(r.from.trim());
}

/** Read a range from URL search params, with defaults. */
export function rangeFromParams(
  params: URLSearchParams,
  dflt: RangeText = DEFAULT_RANGE,
): RangeText {
  return { from: params.get('from') || dflt.from, to: params.get('to') || dflt.to };
}

/** An absolute range for a zoom selection, to the second. */
export function zoomRange(fromMs: number, toMs: number): RangeText {
  const a = Math.floor(Math.min(fromMs, toMs) / 1000) * 1000;
  const b = Math.ceil(Math.max(fromMs, toMs) / 1000) * 1000;
  return { from: new Date(a).toISOString(), to: new Date(Math.max(b, a + 60_000)).toISOString() };
}

/** Twice as wide around the same centre (never past now). */
export function zoomOut(r: ResolvedRange, now: number): RangeText {
  const width = r.toMs - r.fromMs;
  const centre = (r.fromMs + r.toMs) / 2;
  const to = Math.min(now, centre + width);
  return zoomRange(to - 2 * width, to);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "YYYY-MM-DDTHH:MM" for <input type="datetime-local">, in the zone the UI shows (local or UTC). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  if (timeZoneMode() === 'utc') return d.toISOString().slice(0, 16);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text);
  if (!m) return NaN;
  const f = [+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0)] as const;
  return timeZoneMode() === 'utc' ? Date.UTC(...f) : new Date(...f).getTime();
}

/** "Last 6 hours" for presets, "Nov 20, 10:00 → Nov 20, 12:00" otherwise. */
export function describeRange(r: RangeText, now: number): string {
  if (r.to.trim() === 'now') {
    const preset = PRESETS.find((p) => p.from === r.from.trim());
    if (preset) return preset.label;
    const m = /^now-(\d+(?:\.\d+)?)(m|h|d|w)$/.exec(r.from.trim());
    if (m) return `Last ${m[1]}${m[2]}`;
  }
  const { fromMs, toMs } = resolveRange(r, now);
  return `${formatInstant(fromMs)} → ${r.to.trim() === 'now' ? 'now' : formatInstant(toMs)}`;
}

/** "3 min ago", "5 h ago", "2 d ago". */
export function formatAgo(ms: number, now: number): string {
  const s = Math.round((now - ms) / 1000);
  if (s < 0) return 'in the future';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400 * 2) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

export const REFRESH_OPTIONS: ReadonlyArray<{ label: string; value: string; ms: number | false }> =
  [
    { label: 'Off', value: 'off', ms: false },
    { label: '10s', value: '10s', ms: 10_000 },
    { label: '30s', value: '30s', ms: 30_000 },
    { label: '1m', value: '1m', ms: 60_000 },
    { label: '5m', value: '5m', ms: 300_000 },
  ];

/** Auto-refresh interval from the URL; absolute (zoomed) ranges do not move, so they refresh nothing by default. */
export function refreshInterval(value: string | null, range: RangeText): number | false {
  const opt = REFRESH_OPTIONS.find((o) => o.value === value);
  if (opt) return opt.ms;
  return isRelative(range) || range.to.trim() === 'now' ? 60_000 : false;
}

/**
 * The window a regression opens on: twice as long before the onset as after
 * it. A recent onset gets a window that ends at `now` (and keeps refreshing).
 */
export function regressionWindow(onsetMs: number, now: number): RangeText {
  const since = Math.max(0, now - onsetMs);
  const w = Math.min(24 * 3_600_000, Math.max(3_600_000, since));
  const r = zoomRange(onsetMs - 2 * w, Math.min(now, onsetMs + w));
  return onsetMs + w >= now ? { from: r.from, to: 'now' } : r;
}
