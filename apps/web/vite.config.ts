import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * Brotli and gzip siblings (`x.js.br`, `x.js.gz`) of every text asset over
 * 1 KB, written once at build time: the server sends them as they are
 * (@fastify/static `preCompressed`) instead of compressing on each request.
 */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'onset-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = path.resolve(c.root, c.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((n) => {
          const p = path.join(dir, n);
          return statSync(p).isDirectory() ? walk(p) : [p];
        });
      for (const file of walk(outDir)) {
        if (!/\.(js|css|html|svg|json|map)$/.test(file)) continue;
        const body = readFileSync(file);
        if (body.length < 1024) continue;
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
}

// `vite dev` proxies the API to a running Onset server (npm run serve, port 8080).
export default defineConfig({
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 400,
    // bench/ui reads it to measure what the initial route downloads.
    manifest: true,
    rollupOptions: {
      output: {
        // One long-lived vendor chunk for the shell; pages and uPlot load per route.
        manualChunks(id) {
          if (
            /node_modules\/(react|react-dom|scheduler|react-router|react-router-dom|@tanstack)\//.test(
              id,
            )
          )
            return 'vendor';
          return undefined;
        },
      },
    },
  },
  server: {
    proxy: {
      '/api': process.env.ONSET_API ?? 'http://127.0.0.1:8080',
      '/docs': process.env.ONSET_API ?? 'http://127.0.0.1:8080',
    },
  },
});
