import { badRequest } from '../http/errors.ts';
import type { Encoding } from './body.ts';
import { firstError, type JsonChecker } from './json-schema.ts';

/** A request body as its decoded message: protobuf through `codec`, JSON checked against the schema. */
export function parse(
  body: Uint8Array,
  encoding: Encoding,
  codec: { decode(b: Uint8Array): unknown },
  check: JsonChecker,
  what: string,
): unknown {
  if (encoding === 'protobuf') {
    try {
      return codec.decode(body);
    } catch (err) {
      throw badRequest(`body is not a valid ${what} protobuf message: ${(err as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    throw badRequest(`body is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw badRequest(`body must be a JSON object (${what})`);
  const problem = firstError(check, json);
  if (problem) throw badRequest(`invalid ${what} JSON at ${problem}`);
  return json;
}
