-- Up Migration

-- Histogram deltas folded across ingest transactions (docs/storage.md
-- "Histograms folded across transactions"): under load a server keeps the
-- histograms of committed spans in memory for up to ONSET_HISTOGRAM_FOLD
-- (1 s) and writes them merged, one row per (series, resource, minute) instead
-- of one per transaction. Each transaction that leaves its histograms to that
-- fold commits them here too, as the COPY data they would have been, so a
-- crash loses nothing: a server applies and deletes its own rows when it
-- writes the fold, and any server applies the rows of a writer that no longer
-- holds its advisory lock (otlp/histogram-journal.ts). No other index: the
-- table holds about a second of transactions.
CREATE TABLE histogram_journal (
  writer     bigint NOT NULL,
  seq        bigint NOT NULL,
  data       bytea NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (writer, seq)
);
-- Already binary COPY rows: not worth compressing.
ALTER TABLE histogram_journal ALTER COLUMN data SET STORAGE EXTERNAL;

-- Down Migration
DROP TABLE histogram_journal;
