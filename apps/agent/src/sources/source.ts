/** A kernel-event source (bpftrace or strace) the agent can start and stop. */
export interface TracingSource {
  readonly name: 'bpftrace' | 'strace';
  /** Resolves once tracing is live; rejects with a readable reason when it cannot start. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** One line for the log: what is traced. */
  describe(): string;
}
