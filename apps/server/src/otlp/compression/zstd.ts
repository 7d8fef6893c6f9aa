import { Decompress } from 'fzstd';
import { BoundedOutput, DecompressedTooLarge } from './limits.ts';

/**
 * Zstandard (RFC 8878) with fzstd, frame by frame. The frame headers are read
 * first: fzstd allocates the declared window (up to 2 GB) before decoding, so
 * a frame whose window exceeds what the limit could ever need is refused
 * without allocating it. Output is counted block by block (≤ 128 KiB each).
 */
const ZSTD_MAGIC = 0xfd2fb528;
/** The Collector's encoder (klauspost/compress, default level) uses windows up to 8 MiB. */
const MIN_WINDOW_ALLOWANCE = 8 * 1024 * 1024;

export function unzstd(raw: Buffer, limit: number): Buffer {
  const out = new BoundedOutput(limit);
  const windowCap = Math.max(limit, MIN_WINDOW_ALLOWANCE);
  let at = 0;
  while (at < raw.length) {
    if (raw.length - at < 4) throw new Error('truncated zstd frame');
    const magic = raw.readUInt32LE(at);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // skippable frame: magic, 4-byte size, payload
      if (raw.length - at < 8) throw new Error('truncated skippable frame');
      at += 8 + raw.readUInt32LE(at + 4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new Error('not a zstd frame (bad magic number)');
    const end = frameEnd(raw, at, windowCap, limit);
    const frame = raw.subarray(at, end);
    const decoder = new Decompress((chunk) => out.push(chunk));
    decoder.push(frame, true);
    at = end;
  }
  return out.toBuffer();
}

/** Walks one frame's header and block headers; returns where the frame ends. */
function frameEnd(raw: Buffer, start: number, windowCap: number, limit: number): number {
  let at = start + 4;
  const need = (n: number) => {
    if (at + n > raw.length) throw new Error('truncated zstd frame');
  };
  need(1);
  const fhd = raw[at++]!;
  const singleSegment = (fhd >> 5) & 1;
  const checksum = (fhd >> 2) & 1;
  const dictIdBytes = [0, 1, 2, 4][fhd & 3]!;
  const fcsFlag = fhd >> 6;
  const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  let windowSize = 0;
  if (!singleSegment) {
    need(1);
    const wd = raw[at++]!;
    const base = 2 ** (10 + (wd >> 3));
    windowSize = base + (base / 8) * (wd & 7);
  }
  need(dictIdBytes + fcsBytes);
  at += dictIdBytes;
  let contentSize = 0;
  for (let i = 0; i < fcsBytes; i++) contentSize += raw[at + i]! * 2 ** (8 * i);
  if (fcsBytes === 2) contentSize += 256;
  at += fcsBytes;
  if (singleSegment) windowSize = contentSize;
  if (fcsBytes > 0 && contentSize > limit) throw new DecompressedTooLarge(limit);
  if (windowSize > windowCap) throw new DecompressedTooLarge(limit);
  for (;;) {
    need(3);
    const header = raw[at]! | (raw[at + 1]! << 8) | (raw[at + 2]! << 16);
    at += 3;
    const last = header & 1;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === 3) throw new Error('reserved zstd block type');
    at += type === 1 ? 1 : size; // an RLE block stores one byte repeated `size` times
    if (at > raw.length) throw new Error('truncated zstd block');
    if (last) break;
  }
  if (checksum) {
    need(4);
    at += 4;
  }
  return at;
}
