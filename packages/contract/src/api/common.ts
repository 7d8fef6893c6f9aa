import { Type, type Static } from '@sinclair/typebox';

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

/** A string or null. */
export const NStr = Type.Union([Type.String(), Type.Null()]);
/** A number or null. */
export const NNum = Type.Union([Type.Number(), Type.Null()]);

/** Database ids: decimal strings of up to 18 digits. */
export const NumericIdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$' }) });
export type NumericIdParams = Static<typeof NumericIdParams>;

/** A string field that may also be null (OpenAPI 3.0 `nullable`, understood by Ajv). */
export const optText = (maxLength: number, description?: string) =>
  Type.Optional(
    Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      maxLength,
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
