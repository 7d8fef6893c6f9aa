/**
 * `onset-agent` entry point. `npm start` runs this file with no arguments
 * (and OTEL_EXPORTER_OTLP_ENDPOINT pointing at the local server).
 */
import { buildCli } from './cli.ts';
import { ConfigError, loadConfig, type CliFlags } from './config/load.ts';
import type { AgentConfig } from './config/schema.ts';
import { realHost } from './host/facts.ts';
import { createLogger } from './log.ts';

// The agent and doctor pull in the OpenTelemetry exporter; load them only when used, so --help is quick.

function configOrExit(flags: CliFlags): AgentConfig {
  try {
    return loadConfig(flags, process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`onset-agent: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

/** What the agent itself cost, logged at exit (the benchmark reads it too). */
function processSummary(): string {
  const m = process.memoryUsage();
  const cpu = process.cpuUsage();
  const mb = (b: number) => (b / 1048576).toFixed(1);
  return (
    `process: rss ${mb(m.rss)} MB, V8 heap ${mb(m.heapUsed)} MB used of ${mb(m.heapTotal)} MB, ` +
    `external ${mb(m.external)} MB; CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s since start`
  );
}

async function run(flags: CliFlags): Promise<void> {
  const config = configOrExit(flags);
  const log = createLogger(config.logLevel);
  const { startAgent } = await import('./agent.ts');
  const agent = await startAgent(config, { host: realHost(), log });
  if (config.once) {
    await agent.probeRound();
    await agent.stop();
    return;
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(130); // a second Ctrl-C: do not wait for the flush
    log.info(`${signal}: stopping and sending what is queued`);
    void agent.stop().then(() => {
      log.info(processSummary());
      process.exit(0);
    });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

async function doctor(flags: CliFlags): Promise<void> {
  const config = configOrExit(flags);
  const host = realHost();
  const { formatDoctor, runDoctor } = await import('./doctor.ts');
  process.stdout.write('onset-agent doctor: checking (starting bpftrace takes a few seconds)…\n');
  const lines = await runDoctor(config, host);
  process.stdout.write(`${formatDoctor(host, lines)}\n`);
  process.exitCode = lines.find((l) => l.what === 'collector')?.ok ? 0 : 1;
}

buildCli({ run, doctor })
  .parseAsync(process.argv)
  .catch((e: unknown) => {
    process.stderr.write(`onset-agent: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
