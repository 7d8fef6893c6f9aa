import lz4js from 'lz4js';
import { DecompressedTooLarge } from './limits.ts';

/**
 * LZ4 frame format (what the Collector's pierrec/lz4 writer sends), walked
 * here block by block so the limit is checked after every block (≤ 4 MiB
 * each); lz4js decodes the blocks. Blocks may refer back into earlier output,
 * so they are decoded into one growing buffer.
 */
const FRAME_MAGIC = 0x184d2204;
const BLOCK_MAX: Record<number, number> = { 4: 65_536, 5: 262_144, 6: 1_048_576, 7: 4_194_304 };

export function unlz4(raw: Buffer, limit: number): Buffer {
  let out = new Uint8Array(Math.min(limit, Math.max(1024, raw.length * 4)));
  let size = 0;
  let at = 0;
  const need = (n: number) => {
    if (at + n > raw.length) throw new Error('truncated lz4 frame');
  };
  const reserve = (n: number) => {
    if (size + n <= out.length) return;
    const grown = new Uint8Array(Math.min(limit + n, Math.max(out.length * 2, size + n)));
    grown.set(out.subarray(0, size));
    out = grown;
  };
  while (at < raw.length) {
    need(4);
    const magic = raw.readUInt32LE(at);
    at += 4;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      need(4);
      at += 4 + raw.readUInt32LE(at);
      continue;
    }
    if (magic !== FRAME_MAGIC) throw new Error('not an lz4 frame (bad magic number)');
    need(2);
    const flg = raw[at]!;
    const bd = raw[at + 1]!;
    at += 2;
    if (flg >> 6 !== 1) throw new Error('unsupported lz4 frame version');
    const blockChecksum = (flg >> 4) & 1;
    const contentSize = (flg >> 3) & 1;
    const contentChecksum = (flg >> 2) & 1;
    const dictId = flg & 1;
    const blockMax = BLOCK_MAX[(bd >> 4) & 7];
    if (!blockMax) throw new Error('invalid lz4 block size');
    need(contentSize * 8 + dictId * 4 + 1);
    if (contentSize && Number(raw.readBigUInt64LE(at)) > limit)
      throw new DecompressedTooLarge(limit);
    if (dictId) throw new Error('lz4 frames with a dictionary are not supported');
    at += contentSize * 8 + 1; // + header checksum byte
    for (;;) {
      need(4);
      const word = raw.readUInt32LE(at);
      at += 4;
      if (word === 0) break; // end mark
      const stored = (word & 0x80000000) !== 0;
      const length = word & 0x7fffffff;
      if (length > blockMax) throw new Error('lz4 block larger than the frame allows');
      need(length + blockChecksum * 4);
      reserve(blockMax);
      if (stored) {
        out.set(raw.subarray(at, at + length), size);
        size += length;
      } else {
        const end = lz4js.decompressBlock(raw, out, at, length, size);
        if (end - size > blockMax) throw new Error('lz4 block decodes past the frame block size');
        size = end;
      }
      at += length + blockChecksum * 4;
      if (size > limit) throw new DecompressedTooLarge(limit);
    }
    if (contentChecksum) {
      need(4);
      at += 4;
    }
  }
  return Buffer.from(out.buffer, out.byteOffset, size);
}
