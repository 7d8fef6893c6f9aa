import { createHash } from 'node:crypto';

/**
 * Text from telemetry made storable: PostgreSQL `text` refuses NUL and `jsonb`
 * refuses both NUL and lone UTF-16 surrogates (a JSON body may carry "\ud800";
 * a malformed protobuf string decodes to one). Both become U+FFFD, the
 * replacement character, as a UTF-8 decoder would do, and the text is cut to a
 * length without splitting a surrogate pair. Replacing keeps the span (its
 * timing is still true); only the odd characters are lost.
 */
export const REPLACEMENT = '\uFFFD';

/** Longest attribute value kept (UTF-16 code units); labels cut further to 256 in @onset/core. */
export const MAX_VALUE_CHARS = 4096;
/** Longest attribute key or span/metric name kept. */
export const MAX_KEY_CHARS = 256;

// eslint-disable-next-line no-control-regex
const NEEDS_CLEANING = /[\u0000\ud800-\udfff]/;
/** NUL, a high surrogate not followed by a low one, or a low one not preceded by a high one. */
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` without NUL or lone surrogates, at most `max` code units, never ending in half a pair. */
export function cleanText(s: string, max: number): string {
  let out = s.length > max ? cutAt(s, max) : s;
  if (NEEDS_CLEANING.test(out)) out = out.replace(UNSTORABLE, REPLACEMENT);
  return out;
}

/** The first `max` code units, one fewer when the last would be the high half of a pair. */
export function cutAt(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** Whether `s` holds a character PostgreSQL cannot store (NUL, a lone surrogate). */
export function isUnstorable(s: string): boolean {
  if (!NEEDS_CLEANING.test(s)) return false;
  UNSTORABLE.lastIndex = 0;
  const found = UNSTORABLE.test(s);
  UNSTORABLE.lastIndex = 0;
  return found;
}

/** A fixed-size key for text of any length (unique indexes have a ~2.7 kB row limit). */
export function textDigest(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}
