/**
 * Onset on a Citus cluster (docs/citus.md). When DATABASE_URL's database has the `citus`
 * extension (or ONSET_DISTRIBUTED=citus creates it), the tables the migrations made are turned
 * into Citus tables after every migration run, by the plan below:
 *
 * - what grows with series and time is **distributed by series** and colocated, so a series'
 *   histograms, hourly rollups and durations sit in one shard group and a query for one series
 *   routes to one worker;
 * - the raw spans (`observations`) are distributed by **trace**: their dedup key is
 *   `(trace_id, span_id, received_day)` and edge pairing joins a trace's client and server
 *   halves, so both stay on one shard; evidence (exemplars of a series) runs on every worker
 *   in parallel;
 * - SLO minute/hour/day counts are distributed by SLO and colocated with each other;
 * - the registries joined with those (series, resources, which resources feed which series) are
 *   **reference tables**, a copy on every node;
 * - everything else is small or read only by the servers' own passes (deploys, SLOs and their
 *   counts, regressions and detector state, alerts, webhooks, metric streams) and stays **local
 *   on the coordinator**, with graphile-worker's job tables, detection leases, cursors and the
 *   migrations table: every server connects there, its row locks and advisory locks live there,
 *   and it keeps working (alerts, webhooks) while a worker is down.
 *
 * Every table a migration creates must be named here: `citusPlanGaps` lists those that are not,
 * and a test fails on any (apps/server/test/citus).
 */
import pg from 'pg';

export type CitusPlacement =
  | { table: string; kind: 'reference' }
  | { table: string; kind: 'local' }
  | { table: string; kind: 'distributed'; by: string; colocateWith?: string };

const ref = (table: string): CitusPlacement => ({ table, kind: 'reference' });
const local = (table: string): CitusPlacement => ({ table, kind: 'local' });
const dist = (table: string, by: string, colocateWith?: string): CitusPlacement => ({
  table,
  kind: 'distributed',
  by,
  colocateWith,
});

/** In the order they are converted: reference tables before the tables whose keys name them. */
export const CITUS_PLAN: readonly CitusPlacement[] = [
  // The registries: joined with every bulk table (a copy on each worker, so no join moves them).
  ref('series'),
  ref('resources'),
  ref('series_resources'),
  // What grows with series and time: one shard group by series.
  dist('histograms', 'series_id'),
  dist('histograms_hourly', 'series_id', 'histograms'),
  dist('span_durations', 'series_id', 'histograms'),
  // Raw spans by trace: their dedup key and edge pairing's join stay on one shard.
  dist('observations', 'trace_id'),
  // Small tables, written by one statement at a time: on the coordinator, where they keep
  // working while a worker is down (alerts still go out).
  local('metric_streams'),
  // Unused on Citus (every transaction writes its own histograms and durations there: index.ts).
  local('histogram_journal'),
  local('fold_journal'),
  local('fold_marks'),
  // Detector state: read and written by the servers' passes only, joined with the registry.
  local('regress_state'),
  local('deploys'),
  local('deploy_inference_values'),
  local('slos'),
  local('slo_minutes'),
  local('slo_hours'),
  local('slo_days'),
  local('regressions'),
  local('regression_members'),
  local('alerts'),
  local('alert_events'),
  local('silences'),
  local('webhooks'),
  local('webhook_deliveries'),
  local('webhook_attempts'),
  local('alertmanager_silences'),
  // Cursors, leases and singletons: on the coordinator with graphile-worker's job tables.
  local('slo_counter_state'),
  local('pairing_state'),
  local('regress_pass'),
  local('deploy_inference_cursor'),
  local('grafana_annotation_cursor'),
  local('detect_members'),
  local('detect_leases'),
  local('detect_shard_marks'),
  local('onset_migrations'),
];

export type DistributedMode = 'auto' | 'citus' | 'off';

/** Whether the database is a Citus coordinator (the extension is installed in it). */
export async function citusVersion(c: pg.ClientBase): Promise<string | null> {
  const { rows } = await c.query<{ v: string }>(
    `SELECT extversion AS v FROM pg_extension WHERE extname = 'citus'`,
  );
  return rows[0]?.v ?? null;
}

/** Tables in the public schema the plan does not place (a migration added a table: name it above). */
export async function citusPlanGaps(c: pg.ClientBase): Promise<string[]> {
  const { rows } = await c.query<{ t: string }>(
    `SELECT c.relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND c.relname <> ALL ($1::text[]) ORDER BY 1`,
    [CITUS_PLAN.map((p) => p.table)],
  );
  return rows.map((r) => r.t);
}

/** Any key of the advisory lock the conversion runs under (one server at a time). */
const CITUS_LOCK_KEY = 7_031_031;

/**
 * Before migrations: with ONSET_DISTRIBUTED=citus make sure the extension exists (it needs
 * `shared_preload_libraries = 'citus'` on the server). Returns whether the database is Citus.
 */
export async function prepareCitus(databaseUrl: string, mode: DistributedMode): Promise<boolean> {
  if (mode === 'off') return false;
  const c = new pg.Client(databaseUrl);
  await c.connect();
  try {
    if (await citusVersion(c)) return true;
    if (mode === 'auto') return false;
    try {
      await c.query('CREATE EXTENSION IF NOT EXISTS citus');
    } catch (err) {
      throw new Error(
        `ONSET_DISTRIBUTED=citus but the citus extension cannot be created in this database: ${(err as Error).message}`,
      );
    }
    return true;
  } finally {
    await c.end();
  }
}

/**
 * After migrations: convert every table of the plan that is not yet a Citus table. Idempotent
 * (each start converts only what a new migration added), one server at a time.
 */
export async function distributeTables(databaseUrl: string): Promise<string[]> {
  const c = new pg.Client(databaseUrl);
  await c.connect();
  const done: string[] = [];
  try {
    await c.query('SELECT pg_advisory_lock($1)', [CITUS_LOCK_KEY]);
    const gaps = await citusPlanGaps(c);
    if (gaps.length)
      throw new Error(
        `no Citus placement for table(s) ${gaps.join(', ')} (db/citus.ts CITUS_PLAN)`,
      );
    const { rows } = await c.query<{ t: string }>(
      `SELECT logicalrelid::regclass::text AS t FROM pg_dist_partition`,
    );
    const already = new Set(rows.map((r) => r.t));
    for (const p of CITUS_PLAN) {
      if (p.kind === 'local' || already.has(p.table)) continue;
      if (p.kind === 'reference') {
        await c.query(`SELECT create_reference_table($1)`, [p.table]);
      } else {
        await c.query(`SELECT create_distributed_table($1, $2, colocate_with => $3)`, [
          p.table,
          p.by,
          p.colocateWith ?? 'default',
        ]);
      }
      done.push(p.table);
    }
    return done;
  } finally {
    await c.query('SELECT pg_advisory_unlock($1)', [CITUS_LOCK_KEY]).catch(() => {});
    await c.end();
  }
}

/** Messages of errors a Citus coordinator relays from a worker under SQLSTATE XX000, by their real code. */
const RELAYED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^duplicate key value violates unique constraint/, '23505'],
  [/^deadlock detected/, '40P01'],
  [/^null value in column .* violates not-null constraint/, '23502'],
  // A worker going away mid-statement: the database is (partly) unavailable, not the request wrong.
  [/terminating connection due to administrator command/, '57P01'],
  [/the database system is (shutting down|starting up|in recovery)/, '57P03'],
  [/^failure on connection marked as essential/, '08006'],
  [/^connection to the remote node .* failed/, '08006'],
  [/^could not (connect|establish connection|get a connection)/, '08006'],
];

/**
 * The SQLSTATE of a database error. A Citus coordinator relays some errors of a COPY into a
 * distributed table (a worker's unique violation) as XX000 with the worker's message; those
 * get their real code back. On a single PostgreSQL this is `err.code`.
 */
export function sqlState(err: unknown): string {
  const e = (err ?? {}) as { code?: string; message?: string };
  if (e.code === 'XX000' && e.message)
    for (const [re, code] of RELAYED) if (re.test(e.message)) return code;
  return e.code ?? '';
}

const citusConnections = new WeakMap<object, boolean>();

/** Whether this connection's database is a Citus coordinator (asked once per connection). */
export async function isCitusConnection(c: pg.ClientBase): Promise<boolean> {
  let on = citusConnections.get(c);
  if (on === undefined) {
    on = (await citusVersion(c)) !== null;
    citusConnections.set(c, on);
  }
  return on;
}
