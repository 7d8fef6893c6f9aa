import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DURATION_PATTERN, TIME_PATTERN } from '../time.ts';

/** Every error answer: `{"error": "<code>", "message": "<human text>"}` (api.md). */
export const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() });
export type ErrorBody = Static<typeof ErrorBody>;

/** The error answers most operations document. */
export const ErrorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
};

/**
 * The refusals any operation can answer before its handler runs, declared
 * here once and added to every operation by `withErrors`, so /docs/json names
 * every status a client can get (schemathesis holds the server to it):
 * - 401 no or an unknown bearer token, 403 a token without the route's scope
 *   or (open mode) a refused Origin;
 * - 408 the request (headers and body) was not received within the request
 *   timeout (ONSET_REQUEST_TIMEOUT);
 * - 421 a Host header the server does not answer to (open mode);
 * - 503 the database is unreachable (with Retry-After).
 */
export const AUTH_AND_HOST_ERRORS = [401, 403, 408, 421, 503] as const;
/** Operations with a query, path or body: 400 when it fails validation. */
export const INPUT_ERRORS = [400] as const;
/** Operations with path parameters: 404 when they name nothing. */
export const PATH_ERRORS = [404] as const;
/** Methods that may carry a body: 400 unparseable, 413 over the limit, 415 a media type not taken. */
export const BODY_ERRORS = [400, 413, 415] as const;
/** Every error status the helpers can add, for the types. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 421 | 422 | 503;

interface OperationSchemas {
  params?: TSchema;
  querystring?: TSchema;
  body?: unknown;
  response?: Record<number, unknown>;
}

/**
 * An operation with the error answers it can give: the shared refusals above
 * (by what the operation takes and its method) plus `extra` (e.g. 409), each
 * an ErrorBody. The operation's own responses win for the same status.
 */
export function withErrors<const O extends OperationSchemas>(
  method: string,
  op: O,
  extra: readonly ErrorStatus[] = [],
): O & { response: NonNullable<O['response']> & Record<ErrorStatus, typeof ErrorBody> } {
  const codes = new Set<number>([...AUTH_AND_HOST_ERRORS, ...extra]);
  if (op.params || op.querystring || op.body) INPUT_ERRORS.forEach((c) => codes.add(c));
  if (op.params) PATH_ERRORS.forEach((c) => codes.add(c));
  if (method !== 'GET') BODY_ERRORS.forEach((c) => codes.add(c));
  const errors = Object.fromEntries([...codes].sort().map((c) => [c, ErrorBody]));
  const input = Object.fromEntries(
    (['params', 'querystring', 'body'] as const)
      .filter((k) => op[k] !== undefined)
      .map((k) => [k, withoutNul(op[k])]),
  );
  return { ...op, ...input, response: { ...errors, ...op.response } } as never;
}

/** Text without NUL: what every request string must be (PostgreSQL cannot store NUL). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/**
 * The schema with every string that has no pattern of its own (the grammar
 * patterns already exclude NUL) limited to NUL-free text: the server refuses
 * a NUL anywhere in a request (400), and the document says so.
 */
function withoutNul<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withoutNul) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string | symbol, unknown> = { ...(schema as object) };
  for (const [k, v] of Object.entries(out))
    if (k !== 'enum' && k !== 'const' && k !== 'default') out[k] = withoutNul(v);
  if (out.type === 'string' && out.pattern === undefined && out.enum === undefined)
    out.pattern = NO_NUL_PATTERN;
  return out as T;
}

/** A time in the API's grammar (contract time.ts): "now", "now-6h", epoch ms or RFC 3339. */
export const TimeText = (description: string) =>
  Type.String({ pattern: TIME_PATTERN, maxLength: 64, description });

/** A duration in the API's grammar: "90s", "5m", "1.5h", "28d", "2w". */
export const DurationText = (description: string) =>
  Type.String({ pattern: DURATION_PATTERN, maxLength: 32, description });

/** A string or null. */
export const NStr = Type.Union([Type.String(), Type.Null()]);
/** A number or null. */
export const NNum = Type.Union([Type.Number(), Type.Null()]);

/** Database ids: decimal strings of up to 18 digits. */
export const NumericIdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$' }) });
export type NumericIdParams = Static<typeof NumericIdParams>;

/** A string field that may also be null (OpenAPI 3.0 `nullable`, understood by Ajv). */
export const optText = (maxLength: number, description?: string, extra: object = {}) =>
  Type.Optional(
    Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      maxLength,
      ...extra,
      ...(description ? { description } : {}),
    }),
  );

/**
 * A vocabulary as a response field: a plain string on the wire (the
 * serializer writes it as a string) whose type is the vocabulary's union.
 */
export const stringEnum = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({
    type: 'string',
    enum: [...values],
    ...(description ? { description } : {}),
  });

/** The schema of a 204 answer. */
export const NoContent = Type.Null();
