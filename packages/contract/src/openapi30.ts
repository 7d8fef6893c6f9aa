/**
 * The contract's schemas are JSON Schema as Ajv validates them (draft 7:
 * `exclusiveMinimum: 0` is a number). OpenAPI 3.0, the dialect of
 * /docs/json, spells the same bound `minimum: 0, exclusiveMinimum: true`,
 * and tools that read the document (schemathesis) refuse the draft-7
 * spelling. This rewrites a document or schema into the 3.0 spelling; the
 * bounds are the same.
 */
export function toOpenApi30Bounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map(toOpenApi30Bounds) as T;
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = toOpenApi30Bounds(v);
  for (const [exclusive, inclusive] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[exclusive] === 'number' && out[inclusive] === undefined) {
      out[inclusive] = out[exclusive];
      out[exclusive] = true;
    }
  }
  return out as T;
}

type Json = Record<string, unknown>;

/**
 * The whole document in OpenAPI 3.0 terms: bounds as above, and a request
 * body whose schema admits null is optional (`required: false`: the
 * server takes a missing body as null; @fastify/swagger marks every body
 * required).
 */
export function toOpenApi30Document<T extends object>(doc: T): T {
  const out = toOpenApi30Bounds(doc) as Json;
  for (const methods of Object.values((out.paths ?? {}) as Record<string, Record<string, Json>>))
    for (const op of Object.values(methods)) {
      const body = op.requestBody as { required?: boolean; content?: Record<string, Json> };
      const schemas = Object.values(body?.content ?? {}).map((c) => c.schema as Json | undefined);
      if (schemas.length && schemas.every((s) => s?.nullable === true)) body.required = false;
    }
  return out as T;
}
