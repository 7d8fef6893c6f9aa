import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `vite dev` proxies the API to a running Onset server (npm run serve, port 8080).
export default defineConfig({
  plugins: [react()],
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
