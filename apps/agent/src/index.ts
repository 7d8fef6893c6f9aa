/** Programmatic use of the agent (tests, benchmarks, embedding). */
export { startAgent, type AgentDeps, type RunningAgent } from './agent.ts';
export { loadConfig, ConfigError, type CliFlags } from './config/load.ts';
export type { AgentConfig } from './config/schema.ts';
export type * from './events.ts';
export { realHost, type HostFacts } from './host/facts.ts';
export { createLogger, type Logger } from './log.ts';
export { runDoctor, formatDoctor } from './doctor.ts';
