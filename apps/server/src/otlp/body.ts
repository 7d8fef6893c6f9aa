import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { HttpError } from '../http/errors.ts';
import { DecompressedTooLarge } from './compression/limits.ts';
import { unzstd } from './compression/zstd.ts';
import { isSnappyFramed, unsnappyBlock, unsnappyFramed } from './compression/snappy.ts';
import { unlz4 } from './compression/lz4.ts';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);

export type Encoding = 'protobuf' | 'json';

export function mediaType(contentType: string | undefined): Encoding {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  throw new HttpError(
    415,
    'unsupported_media_type',
    `unsupported Content-Type "${type || '(none)'}": use application/x-protobuf or application/json`,
  );
}

/** Every Content-Encoding the OpenTelemetry Collector's HTTP client can send. */
const CONTENT_ENCODINGS = [
  'gzip',
  'zstd',
  'snappy',
  'x-snappy-framed',
  'zlib',
  'deflate',
  'lz4',
] as const;

/** A zlib stream (RFC 1950) starts with CM=8 and a header checksum; anything else under "deflate" is raw RFC 1951. */
const isZlibWrapped = (raw: Buffer) =>
  raw.length >= 2 && (raw[0]! & 0x0f) === 8 && ((raw[0]! << 8) | raw[1]!) % 31 === 0;

async function decompress(raw: Buffer, enc: string, limit: number): Promise<Buffer | undefined> {
  const opts = { maxOutputLength: limit };
  switch (enc) {
    case 'gzip':
    case 'x-gzip':
      return gunzip(raw, opts);
    case 'zlib':
      return inflate(raw, opts);
    case 'deflate': // the Collector sends zlib-wrapped data here; some clients send raw deflate
      return isZlibWrapped(raw) ? inflate(raw, opts) : inflateRaw(raw, opts);
    case 'zstd':
      return unzstd(raw, limit);
    case 'snappy':
      return isSnappyFramed(raw) ? unsnappyFramed(raw, limit) : unsnappyBlock(raw, limit);
    case 'x-snappy-framed':
      return unsnappyFramed(raw, limit);
    case 'lz4':
      return unlz4(raw, limit);
    default:
      return undefined;
  }
}

/** Decompress per Content-Encoding; the size limit applies to the inflated bytes (bombs stop at the limit). */
export async function decodeBody(
  raw: Buffer,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<Buffer> {
  const enc = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '') return raw;
  let out: Buffer | undefined;
  try {
    out = await decompress(raw, enc, maxBytes);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (
      err instanceof DecompressedTooLarge ||
      code === 'ERR_BUFFER_TOO_LARGE' ||
      err instanceof RangeError
    )
      throw new HttpError(
        413,
        'payload_too_large',
        `decompressed body exceeds the ${maxBytes}-byte limit`,
      );
    throw new HttpError(400, 'bad_request', `body is not valid ${enc}: ${(err as Error).message}`);
  }
  if (out === undefined)
    throw new HttpError(
      415,
      'unsupported_media_type',
      `unsupported Content-Encoding "${enc}": use ${CONTENT_ENCODINGS.join(', ')} or none`,
    );
  return out;
}
