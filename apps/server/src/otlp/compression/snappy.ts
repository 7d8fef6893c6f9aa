import { uncompress } from 'snappyjs';
import { BoundedOutput, DecompressedTooLarge } from './limits.ts';
import { maskedCrc32c } from './crc32c.ts';

/**
 * Snappy, both formats the Collector sends: `Content-Encoding: snappy` is the
 * block format (older Collectors sent the framing format under that name, so
 * it is detected by its stream identifier, as the Collector's own receiver
 * does); `x-snappy-framed` is the framing format. Blocks are decoded by
 * snappyjs, which reads the declared length first and refuses one above the
 * limit before allocating.
 */
const STREAM_IDENTIFIER = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);
/** The framing format caps a chunk's uncompressed data at 64 KiB. */
const MAX_CHUNK_DATA = 65_536;

export function isSnappyFramed(raw: Buffer): boolean {
  return (
    raw.length >= STREAM_IDENTIFIER.length &&
    raw.subarray(0, STREAM_IDENTIFIER.length).equals(STREAM_IDENTIFIER)
  );
}

export function unsnappyBlock(raw: Buffer, limit: number): Buffer {
  const declared = declaredLength(raw);
  if (declared > limit) throw new DecompressedTooLarge(limit);
  return Buffer.from(uncompress(raw, limit));
}

export function unsnappyFramed(raw: Buffer, limit: number): Buffer {
  if (!isSnappyFramed(raw)) throw new Error('missing the snappy stream identifier');
  const out = new BoundedOutput(limit);
  let at = 0;
  while (at < raw.length) {
    if (raw.length - at < 4) throw new Error('truncated snappy chunk header');
    const type = raw[at]!;
    const length = raw.readUIntLE(at + 1, 3);
    const body = raw.subarray(at + 4, at + 4 + length);
    if (body.length < length) throw new Error('truncated snappy chunk');
    at += 4 + length;
    if (type === 0xff) {
      if (!body.equals(STREAM_IDENTIFIER.subarray(4)))
        throw new Error('bad snappy stream identifier');
    } else if (type === 0x00 || type === 0x01) {
      if (length < 4) throw new Error('snappy chunk too short for its checksum');
      const data =
        type === 0x00 ? unsnappyBlock(body.subarray(4), MAX_CHUNK_DATA) : body.subarray(4);
      if (data.length > MAX_CHUNK_DATA) throw new Error('snappy chunk larger than 64 KiB');
      if (maskedCrc32c(data) !== body.readUInt32LE(0))
        throw new Error('snappy chunk checksum mismatch');
      out.push(data);
    } else if (type <= 0x7f) {
      throw new Error(`reserved unskippable snappy chunk type 0x${type.toString(16)}`);
    } // 0x80-0xfe: skippable (padding and the like)
  }
  return out.toBuffer();
}

/** The block format starts with the uncompressed length as a varint. */
function declaredLength(raw: Buffer): number {
  let value = 0;
  for (let i = 0, shift = 0; i < 5 && i < raw.length; i++, shift += 7) {
    const byte = raw[i]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return value;
  }
  throw new Error('bad snappy length header');
}
