import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { HttpError } from '../http/errors.ts';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);

export type Encoding = 'protobuf' | 'json';

export function mediaType(contentType: string | undefined): Encoding {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  throw new HttpError(415, 'unsupported_media_type', `unsupported Content-Type "${type || '(none)'}": use application/x-protobuf or application/json`);
}

/** Decompress per Content-Encoding; the size limit applies to the inflated bytes (gzip bombs stop at the limit). */
export async function decodeBody(raw: Buffer, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const enc = (contentEncoding ?? 'identity').trim().toLowerCase();
  const opts = { maxOutputLength: maxBytes };
  try {
    if (enc === 'identity' || enc === '') return raw;
    if (enc === 'gzip' || enc === 'x-gzip') return await gunzip(raw, opts);
    if (enc === 'deflate') return await inflate(raw, opts);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
      throw new HttpError(413, 'payload_too_large', `decompressed body exceeds the ${maxBytes}-byte limit`);
    throw new HttpError(400, 'bad_request', `body is not valid ${enc}: ${(err as Error).message}`);
  }
  throw new HttpError(415, 'unsupported_media_type', `unsupported Content-Encoding "${enc}": use gzip or none`);
}
