-- Up Migration

-- The histogram journal (0032) carries each transaction's span durations too
-- (docs/storage.md "Histograms folded across transactions"): under load a
-- transaction commits its durations here instead of its own span_durations
-- rows, and the fold writes the durations of all those transactions merged,
-- one array per (series, minute) instead of one per transaction (that was a
-- row per ~3 spans on a realistic load). `durations` is the COPY data of
-- (series_id, minute, durations, sorted) rows, without the received day: they
-- are received on the day of the transaction that applies them, whose
-- received_at they get. NULL: the transaction wrote its durations itself (a
-- server from before this migration).
ALTER TABLE histogram_journal ADD COLUMN durations bytea;
ALTER TABLE histogram_journal ALTER COLUMN durations SET STORAGE EXTERNAL;

-- Down Migration
ALTER TABLE histogram_journal DROP COLUMN durations;
