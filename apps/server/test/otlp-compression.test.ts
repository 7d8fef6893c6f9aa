import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { init as initZstd, compress as zstdCompress } from '@bokuweb/zstd-wasm';
import { compress as snappyCompress } from 'snappyjs';
import { compressFrameSync as lz4CompressFrame } from 'lz4-napi';
import { startTestServer, type TestServer } from '@onset/testkit';
import { TraceRequest } from '../src/otlp/protobuf.ts';

// Every Content-Encoding the OpenTelemetry Collector can send, with bodies made
// by an independent implementation of each format, through the real server.

let server: TestServer;
const LIMIT = 4 * 1024 * 1024;

beforeAll(async () => {
  await initZstd();
  server = await startTestServer({ env: { ONSET_MAX_BODY_BYTES: String(LIMIT) } });
});
afterAll(async () => {
  await server?.close();
});

const NOW_NS = BigInt(Date.now() - 60_000) * 1_000_000n;
let spanCounter = 1;

/** An ExportTraceServiceRequest with `n` spans of one service, as protobuf. */
function traces(service: string, n: number): Buffer {
  const spans = Array.from({ length: n }, () => {
    const id = spanCounter++;
    return {
      traceId: Buffer.from(id.toString(16).padStart(32, '0'), 'hex'),
      spanId: Buffer.from(id.toString(16).padStart(16, '0'), 'hex'),
      name: 'GET /compressed',
      kind: 2,
      startTimeUnixNano: NOW_NS.toString(),
      endTimeUnixNano: (NOW_NS + 3_000_000n).toString(),
      attributes: [{ key: 'http.request.method', value: { stringValue: 'GET' } }],
    };
  });
  const msg = TraceRequest.fromObject({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ spans }],
      },
    ],
  });
  return Buffer.from(TraceRequest.encode(msg).finish());
}

async function post(body: Uint8Array, encoding: string, contentType = 'application/x-protobuf') {
  const res = await fetch(`${server.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'content-encoding': encoding },
    body: new Uint8Array(body),
  });
  return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
}

async function storedFor(service: string): Promise<number> {
  const { rows } = await server.onset.pool.query(
    `SELECT coalesce(sum(o.n), 0)::int AS n FROM (SELECT 1 AS n FROM observations ob JOIN series s ON s.id = ob.series_id WHERE s.service = $1) o`,
    [service],
  );
  return rows[0].n;
}

// --- the snappy framing format, built per google/snappy framing_format.txt ---
function crc32cBitwise(data: Uint8Array): number {
  let crc = ~0 >>> 0;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0x82f63b78 & -(crc & 1));
  }
  return ~crc >>> 0;
}
function snappyFramed(data: Buffer): Buffer {
  const parts: Buffer[] = [
    Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]),
  ];
  for (let at = 0; at < data.length; at += 65_536) {
    const chunk = data.subarray(at, at + 65_536);
    const crc = crc32cBitwise(chunk);
    const masked = ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
    const block = Buffer.from(snappyCompress(new Uint8Array(chunk)));
    const header = Buffer.alloc(8);
    header[0] = 0x00;
    header.writeUIntLE(block.length + 4, 1, 3);
    header.writeUInt32LE(masked, 4);
    parts.push(header, block);
  }
  return Buffer.concat(parts);
}

const encoders: Array<[string, string, (b: Buffer) => Uint8Array]> = [
  ['gzip', 'gzip', (b) => gzipSync(b)],
  ['zstd (@bokuweb/zstd-wasm)', 'zstd', (b) => zstdCompress(b, 3)],
  ['snappy block (snappyjs)', 'snappy', (b) => snappyCompress(new Uint8Array(b))],
  ['snappy framed under "snappy" (older Collectors)', 'snappy', snappyFramed],
  ['snappy framed (x-snappy-framed)', 'x-snappy-framed', snappyFramed],
  ['zlib', 'zlib', (b) => deflateSync(b)],
  ['deflate (zlib-wrapped, as the Collector sends it)', 'deflate', (b) => deflateSync(b)],
  ['deflate (raw RFC 1951)', 'deflate', (b) => deflateRawSync(b)],
  ['lz4 frame (lz4-napi)', 'lz4', (b) => lz4CompressFrame(b)],
];

describe('every OTLP/HTTP compression the Collector sends is accepted', () => {
  encoders.forEach(([label, encoding, encode], i) => {
    it(label, async () => {
      const service = `compressed-${i}`;
      // 3,000 spans: several snappy chunks and several lz4/zstd blocks
      const body = encode(traces(service, 3_000));
      const res = await post(body, encoding);
      expect(res.status, res.text).toBe(200);
      expect(await storedFor(service)).toBe(3_000);
    });
  });
});

describe('bombs stop at the decompressed-size limit (413) and nothing is stored', () => {
  const zeros = Buffer.alloc(LIMIT * 16);
  const cases: Array<[string, string, () => Uint8Array]> = [
    ['a zstd bomb (64 MiB of zeros)', 'zstd', () => zstdCompress(zeros, 3)],
    [
      'a zstd frame declaring a 2 GiB content size',
      'zstd',
      () => {
        // magic, FHD = 8-byte content size + single segment, size 2^31, then one RLE block of 1 byte
        const frame = Buffer.alloc(4 + 1 + 8 + 3 + 1);
        frame.writeUInt32LE(0xfd2fb528, 0);
        frame[4] = (3 << 6) | (1 << 5);
        frame.writeBigUInt64LE(2n ** 31n, 5);
        frame.writeUIntLE((1 << 3) | (1 << 1) | 1, 13, 3);
        return frame;
      },
    ],
    ['a snappy block bomb', 'snappy', () => snappyCompress(new Uint8Array(zeros))],
    ['a framed snappy bomb', 'x-snappy-framed', () => snappyFramed(zeros)],
    ['an lz4 bomb', 'lz4', () => lz4CompressFrame(zeros)],
    ['a zlib bomb', 'zlib', () => deflateSync(zeros)],
    ['a raw deflate bomb', 'deflate', () => deflateRawSync(zeros)],
  ];
  for (const [label, encoding, make] of cases) {
    it(label, async () => {
      const body = make();
      expect(body.length).toBeLessThan(LIMIT);
      const res = await post(body, encoding, 'application/json');
      expect(res.status).toBe(413);
      expect(res.text).toMatch(/limit/);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    });
  }
});

describe('corrupt compressed bodies get a 400 naming the encoding', () => {
  const spans = () => traces('corrupt', 10);
  const cases: Array<[string, () => Uint8Array]> = [
    ['zstd', () => Buffer.from(zstdCompress(spans(), 3)).subarray(0, 20)],
    ['snappy', () => Buffer.from([0x80, 0x01, 0xff, 0xff, 0xff])],
    [
      'x-snappy-framed',
      () => {
        const framed = snappyFramed(spans());
        framed[framed.length - 1] ^= 0xff; // payload no longer matches its checksum
        return framed;
      },
    ],
    ['lz4', () => Buffer.from(lz4CompressFrame(spans())).subarray(0, 15)],
  ];
  for (const [encoding, make] of cases) {
    it(encoding, async () => {
      const res = await post(make(), encoding, 'application/json');
      expect(res.status).toBe(400);
      expect(res.text).toContain(encoding);
      expect(await storedFor('corrupt')).toBe(0);
    });
  }
});
