-- Up Migration

-- Fold marks: what a transaction that leaves its histograms and durations to
-- the fold (otlp/fold-journal.ts) commits instead of a fold_journal row. A
-- fold_journal row was the transaction's histogram and durations rows as COPY
-- data, ~150 bytes a span on a realistic load (a third of the WAL written per
-- span, and its TOAST chunks a tenth of PostgreSQL's CPU). Those spans are
-- already in `observations`, written by the same transaction, so a mark names
-- them instead: the received day (their partition), the transaction's
-- timestamp (their received_at) and its id (their xmin, which tells two
-- transactions of the same microsecond apart), with how many there are and
-- the partition's size in blocks before they were copied. Recovery reads the
-- partition from a little before that block on (a TID range scan: the rows a
-- COPY appends, from the page its connection last filled;
-- the BRIN on received_at would read every range not yet summarized), and the
-- whole partition only if that does not find them all; it folds them as the
-- direct path once did from its staging table.
--
-- A table of its own: servers from before this migration recover fold_journal
-- rows as COPY data and must never see a mark. New servers still apply the
-- fold_journal and histogram_journal rows old ones leave.
CREATE TABLE fold_marks (
  writer       bigint NOT NULL,
  seq          bigint NOT NULL,
  received_day date NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  xid          xid NOT NULL DEFAULT pg_current_xact_id()::xid,
  spans        int NOT NULL,
  first_block  bigint NOT NULL,
  written_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (writer, seq)
);

-- Down Migration
-- Marks still here stand for acknowledged spans' histograms and durations, which servers before
-- this migration never read: run with ONSET_HISTOGRAM_FOLD=0s for over a minute (recovery applies
-- what is left) until the table is empty, then go down.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM fold_marks) THEN
    RAISE EXCEPTION 'fold_marks is not empty: run the servers with ONSET_HISTOGRAM_FOLD=0s for over a minute, then migrate down';
  END IF;
END $$;
DROP TABLE fold_marks;
