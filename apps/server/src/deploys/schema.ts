import { Type } from '@sinclair/typebox';
import { HttpError } from '../http/errors.ts';
import { DEPLOY_KINDS, DEPLOY_SOURCES, type DeployKind, type DeploySource } from '@onset/contract';
import { LIMITS } from './validate.ts';

/** A string field that may also be null (OpenAPI 3.0 `nullable`, understood by Ajv). */
const optText = (maxLength: number, description?: string) =>
  Type.Optional(
    Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      maxLength,
      ...(description ? { description } : {}),
    }),
  );

const kindSchema = Type.Unsafe<DeployKind>({ type: 'string', enum: [...DEPLOY_KINDS] });
const sourceSchema = Type.Unsafe<DeploySource>({ type: 'string', enum: [...DEPLOY_SOURCES] });
const nullableString = Type.Union([Type.String(), Type.Null()]);

export const MarkerBody = Type.Object({
  service: optText(LIMITS.service, 'the service deployed; required unless hosts are given'),
  environment: optText(LIMITS.environment),
  hosts: Type.Optional(
    Type.Unsafe<string[] | null>({
      type: 'array',
      nullable: true,
      maxItems: LIMITS.hosts,
      items: { type: 'string', maxLength: LIMITS.host },
      description:
        'hosts concerned (a kernel rollout to some hosts); required unless service is given',
    }),
  ),
  kind: kindSchema,
  component: optText(LIMITS.component, 'e.g. the dependency name ("hyper") or "kernel"'),
  from_version: optText(LIMITS.version),
  to_version: optText(LIMITS.version),
  commit: optText(LIMITS.commit),
  url: optText(LIMITS.url, 'http(s) link to the CI run or change'),
  description: optText(LIMITS.description),
  at: optText(LIMITS.at, 'RFC 3339 with timezone; default now; at most a year from now'),
  external_id: optText(
    LIMITS.external_id,
    'idempotency key: a repeated POST with the same external_id returns the first marker',
  ),
});

export const MarkerPatch = Type.Object({
  at: Type.Optional(Type.String({ maxLength: LIMITS.at })),
  description: optText(LIMITS.description),
});

export const Marker = Type.Object({
  id: Type.String(),
  service: nullableString,
  environment: nullableString,
  hosts: Type.Array(Type.String()),
  kind: Type.String(),
  component: nullableString,
  from_version: nullableString,
  to_version: nullableString,
  commit: nullableString,
  url: nullableString,
  description: nullableString,
  at: Type.String({ format: 'date-time' }),
  source: Type.String(),
  external_id: nullableString,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: nullableString,
});

export const ListQuery = Type.Object({
  service: Type.Optional(Type.String({ maxLength: LIMITS.service })),
  host: Type.Optional(Type.String({ maxLength: LIMITS.host })),
  kind: Type.Optional(kindSchema),
  source: Type.Optional(sourceSchema),
  from: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'RFC 3339 or relative like now-7d; default: no lower bound',
    }),
  ),
  to: Type.Optional(
    Type.String({ maxLength: 64, description: 'RFC 3339 or now; default: no upper bound' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 500 })),
});

export const IdParams = Type.Object({ id: Type.String({ maxLength: 20 }) });

export const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() });

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
