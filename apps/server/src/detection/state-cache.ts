/**
 * What the detection pass keeps in memory between passes: a detector per
 * series (with the minute it has seen everything before), within the memory
 * budget (budget.ts). Labels are read per batch (readLabels), never kept for
 * every series. The database (regress_state, state.ts) is the truth: a detector
 * older than its stored state is reloaded, one whose row is gone is
 * dropped, and after a failed pass everything is reloaded.
 */
import { StepDetector } from '@onset/core';
import type { PoolClient } from '../db/pool.ts';
import { readStates } from './state.ts';

export interface Labels {
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string;
}

export interface Tracked {
  det: StepDetector;
  /** The detector has seen every minute before this one. */
  through: number;
}

export class StateCache {
  readonly detectors = new Map<number, Tracked>();

  /** In-memory detectors may be ahead of what was committed: start again from the checkpoints. */
  reset(): void {
    this.detectors.clear();
  }

  /**
   * Keep at most `max` detectors (budget.ts). Those whose stored checkpoint
   * is as recent as they are go first (the next pass reloads them, nothing
   * lost); with `evenUnsaved`, then the oldest others (replayed from their
   * checkpoint). Returns how many were dropped.
   */
  trim(max: number, stored: ReadonlyMap<number, number>, evenUnsaved = false): number {
    let excess = this.detectors.size - max;
    if (excess <= 0) return 0;
    const dropped = excess;
    for (const [id, t] of this.detectors) {
      if (excess <= 0) break;
      if (t.through <= (stored.get(id) ?? -Infinity)) {
        this.detectors.delete(id);
        excess--;
      }
    }
    if (evenUnsaved)
      for (const id of this.detectors.keys()) {
        if (excess <= 0) break;
        this.detectors.delete(id);
        excess--;
      }
    return dropped - excess;
  }

  /** Drop detectors whose stored state is gone (series deleted). */
  keepStored(stored: ReadonlyMap<number, number>): void {
    for (const id of this.detectors.keys()) if (!stored.has(id)) this.detectors.delete(id);
  }

  /**
   * Load the stored state of every series in `ids` whose cached detector is
   * behind it (or missing). Returns the series whose state this version
   * cannot read (the detector changed): they start over.
   */
  async loadStale(
    c: PoolClient,
    ids: number[],
    stored: ReadonlyMap<number, number>,
  ): Promise<number[]> {
    const unreadable: number[] = [];
    const stale = ids.filter(
      (id) => (this.detectors.get(id)?.through ?? -Infinity) < stored.get(id)!,
    );
    if (!stale.length) return unreadable;
    for (const [id, r] of await readStates(c, stale)) {
      try {
        this.detectors.set(Number(id), {
          det: StepDetector.decode(r.state),
          through: Number(r.through),
        });
      } catch {
        this.detectors.delete(Number(id));
        unreadable.push(Number(id));
      }
    }
    return unreadable;
  }
}

/** Labels of these series (a batch's, or those with a step), by id. */
export async function readLabels(
  c: PoolClient,
  ids: readonly number[],
): Promise<Map<number, Labels>> {
  const out = new Map<number, Labels>();
  if (!ids.length) return out;
  const { rows } = await c.query<Labels & { id: number }>(
    `SELECT id, service, op, view, name, peer FROM series WHERE id = ANY($1::bigint[])`,
    [ids],
  );
  for (const r of rows)
    out.set(Number(r.id), {
      service: r.service,
      op: r.op,
      view: r.view,
      name: r.name,
      peer: r.peer,
    });
  return out;
}
