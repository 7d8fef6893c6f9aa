/**
 * The time grammar of the API and of the UI's URLs, in one place:
 * durations ("90s", "5m", "1h", "28d", "2w") and instants ("now",
 * "now-6h", epoch milliseconds, RFC 3339).
 */
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** Milliseconds in a duration like "90s", "5m", "1h", "28d", "2w"; throws on anything else. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(text);
  if (!m) throw new Error(`invalid duration "${text}" (expected e.g. 30s, 5m, 1h, 28d)`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** Why a time did not parse: a bad `now-<duration>`, or not an RFC 3339 time. */
export class TimeSyntaxError extends Error {
  constructor(
    readonly kind: 'relative' | 'absolute',
    readonly text: string,
  ) {
    super(
      kind === 'relative' ? `invalid relative time "${text}"` : `"${text}" is not an RFC 3339 time`,
    );
    this.name = 'TimeSyntaxError';
  }
}

/** Epoch milliseconds for "now", "now-6h", epoch ms (10 to 14 digits) or RFC 3339; throws TimeSyntaxError. */
export function parseTime(text: string, now: number): number {
  const t = text.trim();
  if (t === 'now') return now;
  const rel = /^now-(.+)$/.exec(t);
  if (rel) {
    try {
      return now - parseDuration(rel[1]!);
    } catch {
      throw new TimeSyntaxError('relative', text);
    }
  }
  if (/^\d{10,14}$/.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw new TimeSyntaxError('absolute', text);
  return ms;
}

/** parseTime, but NaN instead of an error (for URLs a user may have edited). */
export function resolveTime(text: string, now: number): number {
  try {
    return parseTime(text, now);
  } catch (e) {
    if (e instanceof TimeSyntaxError) return NaN;
    throw e;
  }
}
