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

/*
 * The grammar as JSON-schema patterns, so /docs/json says exactly what the
 * API takes. Written with [0-9] and explicit characters (never \d or \s):
 * the document is read by ECMAScript (Ajv) and by Python (schemathesis),
 * whose \d and \s match different characters.
 */
const DURATION = '[0-9]+(?:\\.[0-9]+)?(?:ms|s|m|h|d|w)';
const RFC3339 =
  '[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt ]' +
  '(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?' +
  '(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])';
/** The characters String.prototype.trim() removes (ECMAScript WhiteSpace and LineTerminator). */
export const TRIMMED_CHARS =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** An RFC 3339 time, or blank (blank means absent), with surrounding whitespace. */
export const RFC3339_OR_BLANK_PATTERN = `^[${TRIMMED_CHARS}]*(?:${RFC3339}[${TRIMMED_CHARS}]*)?$`;
/** Text with something besides whitespace in it. */
export const NOT_BLANK_PATTERN = `[^${TRIMMED_CHARS}]`;
/** A duration as the API takes it: "90s", "5m", "1.5h", "28d", "2w". */
export const DURATION_PATTERN = `^${DURATION}$`;
/** An RFC 3339 time with an offset ("2026-11-20T10:42:00Z"); seconds may be left out. */
export const RFC3339_PATTERN = `^${RFC3339}$`;
/** An instant as the API takes it: "now", "now-6h", epoch ms (10 to 14 digits) or RFC 3339. */
export const TIME_PATTERN = `^(?:now(?:-${DURATION})?|[0-9]{10,14}|${RFC3339})$`;

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
