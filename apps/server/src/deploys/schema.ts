import {
  DEPLOY_KINDS,
  DURATION_PATTERN,
  RFC3339_OR_BLANK_PATTERN,
  TIME_PATTERN,
} from '@onset/contract';
import { HttpError } from '../http/errors.ts';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** The value that failed (Ajv's verbose mode, http/validation.ts). */
  data?: unknown;
}

/** What the contract's patterns mean, in words, for a value that does not match. */
const PATTERN_WORDS: Record<string, (field: string, value: string) => string> = {
  [RFC3339_OR_BLANK_PATTERN]: (f, v) =>
    `${f}: "${v}" is not an RFC 3339 time with a timezone, e.g. 2026-11-20T10:42:00Z`,
  [TIME_PATTERN]: (f, v) => `${f}: "${v}" is not an RFC 3339 time, epoch ms, now or now-<duration>`,
  [DURATION_PATTERN]: (f, v) => `${f}: invalid duration "${v}" (expected e.g. 30s, 5m, 1h, 28d)`,
};

/**
 * Turn Ajv's errors into one sentence naming the field, e.g.
 * "kind must be one of code, dependency, kernel, config, infra".
 */
export function formatValidationError(errors: AjvError[], dataVar: string): Error {
  // The body's one rule across fields (DeployInput's anyOf).
  if (dataVar === 'body' && errors.some((x) => x.keyword === 'anyOf' && x.instancePath === ''))
    return new HttpError(
      400,
      'bad_request',
      'a marker needs a "service", "hosts", or both (which code or which machines changed)',
    );
  const e = errors[0];
  if (!e) return new HttpError(400, 'bad_request', `invalid ${dataVar}`);
  const path = e.instancePath
    .split('/')
    .filter(Boolean)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i ? `.${p}` : p))
    .join('');
  const field = path || dataVar;
  let msg: string;
  switch (e.keyword) {
    case 'required': {
      const missing = String(e.params.missingProperty);
      msg =
        `${missing} is required` +
        (missing === 'kind' ? ` (one of ${DEPLOY_KINDS.join(', ')})` : '');
      break;
    }
    case 'enum':
      msg = `${field} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
      break;
    case 'pattern': {
      const words = PATTERN_WORDS[String(e.params.pattern)];
      msg = words
        ? words(field, String(e.data).slice(0, 64))
        : `${field} ${e.message ?? 'is invalid'}`;
      return new HttpError(400, 'bad_request', msg);
    }
    case 'maxLength':
      msg = `${field} is too long (at most ${e.params.limit} characters)`;
      break;
    case 'maxItems':
      msg = `${field} has too many entries (at most ${e.params.limit})`;
      break;
    case 'type':
      msg = `${field} must be ${e.params.type === 'object' ? 'a JSON object' : /^[aeiou]/.test(String(e.params.type)) ? `an ${e.params.type}` : `a ${e.params.type}`}`;
      break;
    default:
      msg = `${field} ${e.message ?? 'is invalid'}`;
  }
  return new HttpError(400, 'bad_request', msg);
}
