/**
 * The web build is served the way browsers cache best: hashed assets
 * precompressed (brotli, else gzip) with a year-long immutable Cache-Control,
 * index.html and deep links revalidated every load. Needs apps/web/dist
 * (`npm run build:web`; `npm test` builds it first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'node:http';
import { startTestServer, type TestServer } from '@onset/testkit';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
}, 120_000);
afterAll(async () => server?.close());

/** A raw GET (fetch would decode the body and hide Content-Encoding). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe('static UI serving', () => {
  const asset = readdirSync(path.join(DIST, 'assets')).find(
    (f) => f.startsWith('vendor-') && f.endsWith('.js'),
  )!;
  const original = () => readFileSync(path.join(DIST, 'assets', asset));

  it('sends a hashed asset as brotli, immutable for a year', async () => {
    const r = await get(`${server.url}/assets/${asset}`, { 'accept-encoding': 'gzip, br' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(String(r.headers['vary'])).toMatch(/accept-encoding/i);
    expect(r.body.length).toBeLessThan(original().length / 2);
    expect(brotliDecompressSync(r.body).equals(original())).toBe(true);
  });

  it('falls back to gzip, then to the plain file', async () => {
    const gz = await get(`${server.url}/assets/${asset}`, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(original())).toBe(true);
    const plain = await get(`${server.url}/assets/${asset}`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(original())).toBe(true);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('revalidates index.html and deep links on every load', async () => {
    for (const p of ['/', '/index.html', '/regressions/42']) {
      const r = await get(`${server.url}${p}`, { 'accept-encoding': 'br' });
      expect(r.status, p).toBe(200);
      expect(r.headers['cache-control'], p).toBe('no-cache');
      expect(String(r.headers['content-type']), p).toMatch(/text\/html/);
    }
  });
});
