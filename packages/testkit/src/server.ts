import { startOnset, type RunningOnset } from '@onset/server';
import { loadConfig } from '@onset/server/config';
import { createTestDatabase } from './database.ts';
import { allowLoopbackWebhooks } from './egress.ts';

export interface TestServer {
  /** Base URL of the API/UI listener, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Base URL of the OTLP listener (POST `${otlpUrl}/v1/traces`). */
  otlpUrl: string;
  databaseUrl: string;
  onset: RunningOnset;
  close: () => Promise<void>;
}

/**
 * Start a real Onset server on random loopback ports against a fresh database.
 * Without `scheduler: true` no background jobs run: tests drive passes themselves.
 * Webhooks may reach loopback receivers (allowLoopbackWebhooks).
 */
export async function startTestServer(
  opts: { env?: Record<string, string>; databaseUrl?: string; scheduler?: boolean } = {},
): Promise<TestServer> {
  allowLoopbackWebhooks();
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const config = loadConfig({
    ONSET_PORT: '0',
    ONSET_OTLP_PORT: '0',
    ONSET_LOG_LEVEL: 'warn',
    ...opts.env,
    DATABASE_URL: databaseUrl,
  });
  const onset = await startOnset(config, { scheduler: opts.scheduler ?? false });
  return {
    url: onset.url,
    otlpUrl: onset.otlpUrl ?? onset.url,
    databaseUrl,
    onset,
    close: () => onset.close(),
  };
}
