/**
 * A loopback OTLP/HTTP receiver that keeps every body an exporter sends,
 * exactly as sent (decompressed when it came gzipped), and answers as an OTLP
 * receiver does: 200 with an empty Export*ServiceResponse in the request's
 * encoding. It is how the fixtures in e2e/fixtures/sdk/ were recorded
 * (record.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type Signal = 'traces' | 'metrics' | 'logs';

export interface Captured {
  signal: Signal;
  contentType: string;
  /** The exporter's User-Agent (names the SDK and its version). */
  userAgent: string;
  body: Buffer;
  receivedAt: number;
}

export interface Recorder {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  captured: Captured[];
  close(): Promise<void>;
}

const PATHS: Record<string, Signal> = {
  '/v1/traces': 'traces',
  '/v1/metrics': 'metrics',
  '/v1/logs': 'logs',
};

export async function startRecorder(): Promise<Recorder> {
  const captured: Captured[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const signal = PATHS[req.url ?? ''];
      if (req.method !== 'POST' || !signal) {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const contentType = String(req.headers['content-type'] ?? '');
      captured.push({
        signal,
        contentType,
        userAgent: String(req.headers['user-agent'] ?? ''),
        body,
        receivedAt: Date.now(),
      });
      // An empty response message: zero bytes in protobuf, {} in JSON.
      const json = contentType.startsWith('application/json');
      res
        .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? '{}' : '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    captured,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
