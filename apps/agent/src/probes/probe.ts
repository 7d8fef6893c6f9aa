/** A synthetic probe: a small, repeatable workload the agent times itself. */
import type { EventSink } from '../events.ts';

export type Availability = { ok: true; detail: string } | { ok: false; reason: string };

export interface Probe {
  readonly name: string;
  /** Can it run on this host? Checked once at start; the reason is logged when not. */
  check(): Availability;
  /** One measurement round; emits its events through `emit`. */
  run(emit: EventSink): Promise<void>;
  /** Undo anything left behind (mounts, files). */
  cleanup?(): Promise<void>;
}

/** Let the event loop breathe between timed operations (tracer output keeps flowing). */
export const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
