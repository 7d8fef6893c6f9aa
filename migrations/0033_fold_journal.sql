-- Up Migration

-- The journal of folds across ingest transactions (docs/storage.md "Folded
-- across transactions") now carries each transaction's span durations too:
-- under load a transaction commits its histograms and its durations here,
-- instead of its own histogram and span_durations rows, and the fold writes
-- those of all such transactions merged (one durations array per (series,
-- minute) instead of one per transaction: a row per ~3 spans on a realistic
-- load). `histograms` is the COPY data of histogram rows, as
-- histogram_journal.data; `durations` the COPY data of (series_id, minute,
-- durations, sorted) rows without the received day: they are received on the
-- day of the transaction that applies them, whose received_at they get.
--
-- A table of its own, not a column on histogram_journal: a server from before
-- this migration applies only the histograms of the journal rows it recovers,
-- so it must never see these. New servers still apply what old ones leave in
-- histogram_journal (their durations were written with their spans).
CREATE TABLE fold_journal (
  writer     bigint NOT NULL,
  seq        bigint NOT NULL,
  histograms bytea NOT NULL,
  durations  bytea NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (writer, seq)
);
-- Already binary COPY rows: not worth compressing.
ALTER TABLE fold_journal ALTER COLUMN histograms SET STORAGE EXTERNAL;
ALTER TABLE fold_journal ALTER COLUMN durations SET STORAGE EXTERNAL;

-- Down Migration
-- Rows still here hold acknowledged spans' histograms and durations, which servers before this
-- migration never read: run with ONSET_HISTOGRAM_FOLD=0s for over a minute (recovery applies
-- what is left) until the table is empty, then go down.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM fold_journal) THEN
    RAISE EXCEPTION 'fold_journal is not empty: run the servers with ONSET_HISTOGRAM_FOLD=0s for over a minute, then migrate down';
  END IF;
END $$;
DROP TABLE fold_journal;
