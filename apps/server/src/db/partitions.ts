import type { Pool } from './pool.ts';

const DAY_MS = 86_400_000;

export function utcDay(ms: number): string {
  return new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

export type PartitionedTable =
  'observations' | 'span_durations' | 'histograms' | 'histograms_hourly';

export function partitionName(table: string, day: string): string {
  return `${table}_p${day.replaceAll('-', '')}`;
}

/**
 * Daily partitions for `observations` and `span_durations` (by received day)
 * and `histograms` (by minute). Created on demand and remembered, so the hot path costs a Set lookup.
 */
export class Partitions {
  private readonly known = new Set<string>();
  constructor(private readonly pool: Pool) {}

  async ensure(table: PartitionedTable, days: Iterable<string>): Promise<void> {
    for (const day of days) {
      const name = partitionName(table, day);
      if (this.known.has(name)) continue;
      const next = utcDay(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
      const bounds =
        table === 'observations' || table === 'span_durations'
          ? `FROM ('${day}') TO ('${next}')`
          : `FROM ('${day} 00:00:00+00') TO ('${next} 00:00:00+00')`;
      try {
        // Ingest copies straight into a day's raw partition (otlp/write-spans.ts): its rows
        // take the partition's day.
        const columns = table === 'observations' ? ` (received_day DEFAULT '${day}'::date)` : '';
        await this.pool.query(
          `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${table}${columns} FOR VALUES ${bounds}`,
        );
      } catch (err) {
        // Two requests creating the same partition at once: the loser sees a duplicate.
        const code = (err as { code?: string }).code;
        if (code !== '42P07' && code !== '23505') throw err;
      }
      this.known.add(name);
    }
  }

  /** Drop whole partitions entirely older than the cutoff: retention without row deletes. */
  async dropOlderThan(table: PartitionedTable, cutoffMs: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = $1`,
      [table],
    );
    const dropped: string[] = [];
    for (const { name } of rows) {
      const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
      if (!m) continue;
      const end = Date.parse(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) + DAY_MS;
      if (end <= cutoffMs) {
        await this.pool.query(`DROP TABLE IF EXISTS ${name}`);
        this.known.delete(name);
        dropped.push(name);
      }
    }
    return dropped;
  }
}
