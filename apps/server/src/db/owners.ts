/**
 * One writer per table: the feature folder under apps/server/src that owns
 * each table in migrations/ (partitions go by their parent's name;
 * graphile-worker's own schema is the scheduler's and not listed). Only files
 * in the owning folder insert, update, delete, copy into, truncate, merge,
 * alter or drop it; other features read it by joins where that is the
 * efficient query, or call the owner's store. A second writer by design is
 * named under `alsoWrittenBy` with the reason.
 *
 * apps/server/test/ownership.test.ts reads every SQL string in
 * apps/server/src and fails on a write from outside these folders;
 * docs/where-things-live.md quotes this map (the test checks it).
 */

export interface TableOwner {
  /** The folder under apps/server/src that writes the table. */
  owner: string;
  /** Every query on it, reads too, is in the owner folder (no joins from elsewhere). */
  strict?: true;
  /** Folders that write it too by design: folder -> why. */
  alsoWrittenBy?: Record<string, string>;
}

/** Partitioned tables: db/partitions.ts creates and drops their partitions for their owners. */
const PARTITIONS =
  'creates and drops its day partitions (partitions.ts, DDL on behalf of the owner)';

export const TABLE_OWNERS = {
  resources: { owner: 'otlp' },
  series: { owner: 'otlp' },
  series_resources: { owner: 'otlp' },
  metric_streams: { owner: 'otlp' },
  observations: { owner: 'otlp', alsoWrittenBy: { db: PARTITIONS } },
  span_durations: { owner: 'otlp', alsoWrittenBy: { db: PARTITIONS } },
  histograms: { owner: 'otlp', alsoWrittenBy: { db: PARTITIONS } },
  histograms_hourly: { owner: 'otlp', alsoWrittenBy: { db: PARTITIONS } },
  histogram_journal: { owner: 'otlp' },
  fold_journal: { owner: 'otlp' },
  fold_marks: { owner: 'otlp' },
  pairing_state: { owner: 'edges' },
  deploys: { owner: 'deploys' },
  deploy_inference_values: { owner: 'deploys' },
  deploy_inference_cursor: { owner: 'deploys' },
  regressions: { owner: 'regressions' },
  regression_members: { owner: 'regressions' },
  regress_state: { owner: 'detection' },
  regress_pass: { owner: 'detection' },
  detect_members: { owner: 'detection' },
  detect_leases: { owner: 'detection' },
  detect_shard_marks: { owner: 'detection' },
  slos: { owner: 'slos' },
  slo_minutes: { owner: 'slos' },
  slo_hours: { owner: 'slos' },
  slo_days: { owner: 'slos' },
  slo_counter_state: { owner: 'slos' },
  alerts: { owner: 'alerts', strict: true },
  alert_events: { owner: 'alerts', strict: true },
  silences: { owner: 'alerts' },
  webhooks: { owner: 'webhooks' },
  webhook_deliveries: { owner: 'webhooks' },
  webhook_attempts: { owner: 'webhooks' },
  alertmanager_silences: { owner: 'webhooks' },
  grafana_annotation_cursor: { owner: 'observability' },
} as const satisfies Record<string, TableOwner>;

export type OwnedTable = keyof typeof TABLE_OWNERS;

/**
 * Files whose SQL names its target through a variable (so no string says
 * which table): the tables it can reach. Checked like any other write.
 */
export const DYNAMIC_WRITES: Record<string, readonly OwnedTable[]> = {
  'db/partitions.ts': ['observations', 'span_durations', 'histograms', 'histograms_hourly'],
  'slos/store.ts': ['slo_hours', 'slo_days'],
  // The COPY helper; its callers' strings name the target (write-spans.ts).
  'otlp/copy-in.ts': [],
  // Recovery reads this version's journal and the one servers before migration 0033 wrote.
  'otlp/fold-journal.ts': ['fold_marks', 'fold_journal', 'histogram_journal'],
};
