import { copyIn, pipeline } from './copy-in.ts';
import { isStatementError, type PoolClient } from '../db/pool.ts';
import { copyData } from './copy-rows.ts';
import { partitionName } from '../db/partitions.ts';
import { FUTURE_SLACK_MS } from './normalize-traces.ts';
import { DURATIONS_COPY_TARGET, HISTOGRAM_COPY_TARGET, type FoldSum } from './span-folds.ts';
import { markStatement, type JournalWrite } from './fold-journal.ts';
import { beginReceived, dayMovedBy, receivedDayStatement } from './received-day.ts';
import { isCitusConnection, sqlState } from '../db/citus.ts';

/** Connections whose session already has the staging table. */
const staged = new WeakSet<PoolClient>();

/**
 * Binary COPY cannot skip duplicates, so rows land in a session-local staging
 * table (temporary: no WAL, emptied at commit) and one statement moves them:
 * raw rows into `observations` with `ON CONFLICT DO NOTHING` on
 * `(trace_id, span_id, received_day)` (plus a look at the previous day, so an
 * OTLP retry across midnight is still caught), and exactly the rows that were
 * new folded into per-minute histograms and into one durations array per
 * (series, start minute) in `span_durations`, sorted (exact SLO counts).
 * Attributes come only with exemplars (exemplars.ts).
 */
const FOLD_SQL = `WITH ins AS (
   INSERT INTO observations (received_day, trace_id, span_id, parent_span_id, series_id, resource_id,
                             start_time, duration_us, kind, attrs, exemplar)
   SELECT $1::date, i.trace_id, i.span_id, i.parent_span_id, i.series_id, i.resource_id,
          i.start_time, i.duration_us, i.kind, i.attrs, i.exemplar
     FROM ingest_stage i
    WHERE NOT EXISTS (SELECT 1 FROM observations o
                       WHERE o.received_day = $1::date - 1 AND o.trace_id = i.trace_id AND o.span_id = i.span_id)
   ON CONFLICT DO NOTHING
   RETURNING series_id, resource_id, start_time, duration_us
 ), b AS (
   SELECT series_id, resource_id, date_trunc('minute', start_time) AS minute, onset_bucket(duration_us) AS i,
          count(*)::int AS c, sum(duration_us) AS s, min(duration_us) AS mn, max(duration_us) AS mx
     FROM ins GROUP BY 1, 2, 3, 4
 ), d AS (
   INSERT INTO span_durations (received_day, series_id, minute, durations, sorted)
   SELECT $1::date, series_id, date_trunc('minute', start_time), array_agg(duration_us ORDER BY duration_us), true
     FROM ins GROUP BY 2, 3
 )
 INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
 SELECT series_id, resource_id, minute, sum(c), sum(s), min(mn), max(mx),
        array_agg(i ORDER BY i), array_agg(c ORDER BY i)
   FROM b GROUP BY 1, 2, 3
 RETURNING count`;

/**
 * FOLD_SQL on a Citus coordinator (db/citus.ts), which plans no correlated subquery between the
 * session's staging table and the distributed `observations`: the spans stored the day before
 * are first taken out of the staging table (RETRIED_YESTERDAY_SQL, then a delete by key), and
 * the rest moved with `ON CONFLICT DO NOTHING` as on one PostgreSQL.
 */
const FOLD_CITUS_SQL = FOLD_SQL.replace(
  /\n\s*WHERE NOT EXISTS \(SELECT 1 FROM observations o\n[^\n]*\)/,
  '',
);
if (FOLD_CITUS_SQL === FOLD_SQL)
  throw new Error('FOLD_CITUS_SQL: the yesterday check was not found');

/** The staged spans already stored the day before (joined, not correlated: Citus plans it). */
const RETRIED_YESTERDAY_SQL = `SELECT i.trace_id, i.span_id FROM ingest_stage i
   JOIN observations o ON o.trace_id = i.trace_id AND o.span_id = i.span_id
  WHERE o.received_day = $1::date - 1`;

/**
 * The fast path's fold: every staged row was new (the direct COPY stored them
 * all), so histograms and durations come straight from the staging table.
 */
const FOLD_NEW_SQL = `WITH b AS (
   SELECT series_id, resource_id, date_trunc('minute', start_time) AS minute, onset_bucket(duration_us) AS i,
          count(*)::int AS c, sum(duration_us) AS s, min(duration_us) AS mn, max(duration_us) AS mx
     FROM ingest_stage GROUP BY 1, 2, 3, 4
 ), d AS (
   INSERT INTO span_durations (received_day, series_id, minute, durations, sorted)
   SELECT $1::date, series_id, date_trunc('minute', start_time), array_agg(duration_us ORDER BY duration_us), true
     FROM ingest_stage GROUP BY 2, 3
 )
 INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
 SELECT series_id, resource_id, minute, sum(c), sum(s), min(mn), max(mx),
        array_agg(i ORDER BY i), array_agg(c ORDER BY i)
   FROM b GROUP BY 1, 2, 3
 RETURNING count`;

/** A span of the staged rows already stored the day before (an OTLP retry across midnight). */
const SEEN_YESTERDAY_SQL = `SELECT 1 FROM ingest_stage i
   JOIN observations o ON o.trace_id = i.trace_id AND o.span_id = i.span_id
  WHERE o.received_day = $1::date - 1 LIMIT 1`;

const COLUMNS =
  'trace_id, span_id, parent_span_id, series_id, resource_id, start_time, duration_us, kind, attrs, exemplar';

/**
 * Errors of the direct COPY that the deduplicating path resolves: a span already
 * there (23505), two transactions storing the same spans (40P01), a partition
 * without its day default (23502: made before migration 0020).
 */
const FALLBACK_CODES = new Set(['23505', '40P01', '23502']);

/** Counts of what went which way (for tests and the bench). */
export const writePaths = { direct: 0, deduplicated: 0 };

/** One COPY, its data sent with the statement as one buffer (copy-in.ts). */
async function copyInto(client: PoolClient, target: string, chunks: Buffer[]): Promise<void> {
  await copyIn(client, target, copyData(chunks));
}

const sumCounts = (rows: Array<{ count: number }>) => rows.reduce((n, r) => n + Number(r.count), 0);

/**
 * Write encoded span rows (CopyRows buffers, several requests' worth) in ONE
 * transaction received on `day`; returns how many spans were new. Resolves
 * only after COMMIT; on any error the transaction is rolled back and nothing
 * of any chunk is stored.
 *
 * Nearly every span is new, so the rows are first copied straight into the
 * day's `observations` partition (COPY writes many rows per WAL record and
 * page; the partition's `received_day` default is its day, db/partitions.ts),
 * and the staged copy only feeds the histograms. A span already stored that
 * day makes the COPY fail on the unique key (a retry): the transaction is then
 * rolled back and written again through the deduplicating statement, as is a
 * batch holding a span stored the day before (looked for only when a span
 * starts early enough to have been received then: `minStartMs`).
 */
export async function writeSpans(
  client: PoolClient,
  chunks: Buffer[],
  day: string,
  minStartMs = -Infinity,
  folds?: FoldSum,
  opts: {
    confirmDay?: boolean;
    /** Commit this mark instead of the histograms and durations (fold-journal.ts); its state says what became of it. */
    journal?: JournalWrite;
  } = {},
): Promise<number> {
  if (!staged.has(client)) {
    await client.query(
      `CREATE TEMP TABLE IF NOT EXISTS ingest_stage (
         trace_id bytea, span_id bytea, parent_span_id bytea, series_id bigint, resource_id bigint,
         start_time timestamptz, duration_us double precision, kind smallint, attrs jsonb,
         exemplar boolean
       ) ON COMMIT DELETE ROWS`,
    );
    staged.add(client);
  }
  // A span received yesterday started at most FUTURE_SLACK_MS after yesterday ended: later
  // ones need no look at yesterday's partition (an index probe per span).
  const checkYesterday = minStartMs < Date.parse(`${day}T00:00:00Z`) + FUTURE_SLACK_MS;
  // Every transaction below begins here (received-day.ts): the day's lock, the day confirmed,
  // and before a look at yesterday, yesterday's writers waited for. Hand-rolled, not
  // db/pool.ts's withTransaction: BEGIN goes out in one round trip with those locks, and a
  // fast path that meets a span already stored rolls back and returns null (no throw) so the
  // caller writes the batch again through the deduplicating statement.
  const begin = () =>
    beginReceived(client, day, {
      confirmDay: opts.confirmDay ?? false,
      previousDay: checkYesterday,
    });
  const direct =
    folds && !checkYesterday
      ? await writeFolded(client, chunks, day, folds, opts.confirmDay ?? false, opts.journal)
      : await writeDirect(client, chunks, day, checkYesterday, begin);
  if (direct !== null) return direct;
  writePaths.deduplicated++;
  return writeDeduplicated(client, chunks, day, begin);
}

/**
 * Copy the spans straight into the day's partition; false, with the transaction rolled back,
 * when one of them was already stored (or a concurrent copy of it won): the caller then goes
 * through the deduplicating statement.
 */
async function copyNewSpans(client: PoolClient, chunks: Buffer[], day: string): Promise<boolean> {
  try {
    await copyInto(client, `${partitionName('observations', day)} (${COLUMNS})`, chunks);
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    if (FALLBACK_CODES.has(sqlState(err))) return false;
    throw err;
  }
}

/** The fast path; null when a span was already stored (the transaction is rolled back). */
async function writeDirect(
  client: PoolClient,
  chunks: Buffer[],
  day: string,
  checkYesterday: boolean,
  begin: () => Promise<void>,
): Promise<number | null> {
  await begin();
  try {
    await copyInto(client, 'ingest_stage', chunks);
    if (checkYesterday) {
      const seen = await client.query({
        name: 'onset-ingest-seen-yesterday',
        text: SEEN_YESTERDAY_SQL,
        values: [day],
      });
      if (seen.rows.length) {
        await client.query('ROLLBACK');
        return null;
      }
    }
    if (!(await copyNewSpans(client, chunks, day))) return null;
    const res = await client.query<{ count: number }>({
      name: 'onset-ingest-fold-new',
      text: FOLD_NEW_SQL,
      values: [day],
    });
    await client.query('COMMIT');
    writePaths.direct++;
    return sumCounts(res.rows);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * The fast path when the caller folded the spans (span-folds.ts): no staging
 * at all. The spans go straight into the day's partition, their histograms
 * and durations as the few rows they fold to, and the whole transaction
 * (BEGIN, the day's lock and check, the COPYs, COMMIT) goes out as one
 * pipelined query (copy-in.ts): PostgreSQL never waits for this server's
 * event loop in the middle of it. Null when a span was already stored (the
 * transaction is rolled back).
 */
async function writeFolded(
  client: PoolClient,
  chunks: Buffer[],
  day: string,
  folds: FoldSum,
  confirmDay: boolean,
  journal?: JournalWrite,
): Promise<number | null> {
  if (journal) journal.state = 'sent';
  try {
    await pipeline(client, [
      'BEGIN',
      receivedDayStatement(day, { confirmDay }),
      // The mark first: it reads the partition's size before the COPY appends to it.
      ...(journal ? [markStatement(journal, day)] : []),
      {
        copy: `${partitionName('observations', day)} (${COLUMNS})`,
        data: copyData(chunks),
      },
      ...(journal ? [] : ownRows(folds, day)),
      'COMMIT',
    ]);
  } catch (err) {
    // A statement PostgreSQL refused ended the transaction uncommitted; otherwise (the
    // connection failed, a FATAL error) the mark's fate is unknown.
    if (journal && isStatementError(err)) journal.state = 'none';
    // Whatever failed, the rest of the query was skipped: the transaction is aborted, or over.
    await client.query('ROLLBACK').catch(() => {});
    const moved = dayMovedBy(err);
    if (moved) throw moved;
    if (FALLBACK_CODES.has(sqlState(err))) return null;
    throw err;
  }
  if (journal) journal.state = 'committed';
  writePaths.direct++;
  return folds.spans;
}

/** The COPYs of a transaction's own histogram and durations rows (no journal). */
function ownRows(folds: FoldSum, day: string): Array<{ copy: string; data: Buffer }> {
  const { histograms, durations } = folds.rows(day);
  return [
    { copy: HISTOGRAM_COPY_TARGET, data: copyData([histograms]) },
    { copy: DURATIONS_COPY_TARGET, data: copyData([durations]) },
  ];
}

/** Every row through `ON CONFLICT DO NOTHING` and the previous day's check: exactly the new ones are counted. */
async function writeDeduplicated(
  client: PoolClient,
  chunks: Buffer[],
  day: string,
  begin: () => Promise<void>,
): Promise<number> {
  await begin();
  try {
    await copyInto(client, 'ingest_stage', chunks);
    const citus = await isCitusConnection(client);
    if (citus) {
      const seen = await client.query<{ trace_id: Buffer; span_id: Buffer }>(
        RETRIED_YESTERDAY_SQL,
        [day],
      );
      if (seen.rows.length)
        await client.query(
          `DELETE FROM ingest_stage WHERE (trace_id, span_id) IN (SELECT * FROM unnest($1::bytea[], $2::bytea[]))`,
          [seen.rows.map((r) => r.trace_id), seen.rows.map((r) => r.span_id)],
        );
    }
    const res = await client.query<{ count: number }>({
      name: citus ? 'onset-ingest-fold-citus' : 'onset-ingest-fold',
      text: citus ? FOLD_CITUS_SQL : FOLD_SQL,
      values: [day],
    });
    await client.query('COMMIT');
    return sumCounts(res.rows);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
