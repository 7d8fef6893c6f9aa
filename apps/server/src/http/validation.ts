import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS: its default export is the function under Node's ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Requests are validated exactly as /docs/json describes them. Fastify's
 * default Ajv drops unknown properties (removeAdditional) and coerces body
 * values (123 becomes "123", false becomes "false"), so bodies the document
 * calls invalid were accepted. Here unknown properties of a closed object
 * are refused and bodies are taken as typed; query and path parameters,
 * which are text on the wire, are still read into their declared types.
 */
const COMMON: Options = {
  useDefaults: true,
  removeAdditional: false,
  addUsedSchema: false,
  allErrors: false, // all errors of a hostile body is a CPU sink
  strict: false,
  // Errors carry the failing value, so messages can quote it (deploys/schema.ts).
  verbose: true,
};

export function installValidation(app: FastifyInstance): void {
  const text = addFormats(new Ajv({ ...COMMON, coerceTypes: 'array' }));
  const json = addFormats(new Ajv({ ...COMMON, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? json : text).compile(schema),
  );
}
