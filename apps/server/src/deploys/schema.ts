import { DEPLOY_KINDS } from '@onset/contract';
import { HttpError } from '../http/errors.ts';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * Turn Ajv's errors into one sentence naming the field, e.g.
 * "kind must be one of code, dependency, kernel, config, infra".
 */
export function formatValidationError(errors: AjvError[], dataVar: string): Error {
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
