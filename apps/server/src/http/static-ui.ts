/**
 * Serving the web build: hashed assets (`/assets/index-3f9a1c.js`) are sent
 * precompressed (brotli or gzip siblings written by the build) and cached for
 * a year as immutable, since a new build gives them new names; everything
 * else, index.html first, is revalidated on every load (`no-cache`) so a
 * deploy is picked up at once.
 */
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import path from 'node:path';

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

/** Hashed by the build: under assets/ (Vite's assetsDir). */
function isHashedAsset(root: string, file: string): boolean {
  return path.relative(root, file).split(path.sep)[0] === 'assets';
}

export async function serveUi(app: FastifyInstance, root: string): Promise<void> {
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: 'index.html',
    preCompressed: true,
    cacheControl: false,
    setHeaders(res, file) {
      res.setHeader('Cache-Control', isHashedAsset(root, file) ? IMMUTABLE : REVALIDATE);
      // The same URL answers brotli, gzip or plain: shared caches must key on the encoding.
      res.setHeader('Vary', 'Accept-Encoding');
    },
  });
}
