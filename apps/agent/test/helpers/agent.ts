/** Run the real agent in-process against a real OTLP receiver, watching its log and events. */
import { startAgent, type RunningAgent } from '../../src/agent.ts';
import { loadConfig, type CliFlags } from '../../src/config/load.ts';
import type { AgentConfig } from '../../src/config/schema.ts';
import type { AgentEvent } from '../../src/events.ts';
import { realHost, type HostFacts } from '../../src/host/facts.ts';
import { createLogger } from '../../src/log.ts';

export interface TestAgent {
  agent: RunningAgent;
  config: AgentConfig;
  logs: string[];
  events: AgentEvent[];
  /** Poll until `pred` holds for the collected events (or throw after `timeoutMs`, showing the log). */
  waitFor(what: string, pred: (events: AgentEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestAgent(opts: {
  flags: CliFlags;
  env?: NodeJS.ProcessEnv;
  host?: Partial<HostFacts>;
  /** Tweak the resolved config (e.g. export timings). */
  tune?: (c: AgentConfig) => void;
}): Promise<TestAgent> {
  const env = { ...opts.env };
  const config = loadConfig({ probes: false, ...opts.flags }, env);
  opts.tune?.(config);
  const logs: string[] = [];
  const events: AgentEvent[] = [];
  const log = createLogger('debug', (line) => logs.push(line));
  const host = { ...realHost(process.env), ...opts.host };
  const agent = await startAgent(config, { host, log, onEvent: (e) => events.push(e) });
  return {
    agent,
    config,
    logs,
    events,
    async waitFor(what, pred, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(events)) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what} after ${timeoutMs} ms; events seen: ${eventSummary(events)}; agent log:\n${logs.join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => agent.stop(),
  };
}

/** What arrived, to tell "nothing traced" from "some, not all" in a failure: counts by kind, the last few. */
function eventSummary(events: AgentEvent[]): string {
  const kinds = new Map<string, number>();
  for (const e of events) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
  const counts = [...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
  return `${counts}; last: ${JSON.stringify(events.slice(-3)).slice(0, 1500)}`;
}
