/**
 * The Onset server for the fleet replay, as its own process: the real
 * startOnset (migrations, API, OTLP listener) on DATABASE_URL, without the
 * per-minute scheduler, so that detection runs only when the replay asks
 * (POST /api/v1/detect with `upto`) and never looks past the replayed minutes.
 * Prints `onset-ready <api url> <otlp url>` once listening.
 */
import { startOnset } from '@onset/server';
import { loadConfig } from '@onset/server/config';

const config = loadConfig({ ONSET_PORT: '0', ONSET_OTLP_PORT: '0', ...process.env });
const onset = await startOnset(config, { scheduler: false });
process.stdout.write(`onset-ready ${onset.url} ${onset.otlpUrl ?? onset.url}\n`);
const stop = () => void onset.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
