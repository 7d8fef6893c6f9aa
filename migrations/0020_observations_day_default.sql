-- Up Migration

-- Ingest copies new spans straight into the day's `observations` partition
-- (apps/server/src/otlp/write-spans.ts), so each partition's `received_day`
-- defaults to its own day. Partitions made from now on get the default when
-- they are created (db/partitions.ts); these are the ones made before.
DO $$
DECLARE p record;
BEGIN
  FOR p IN SELECT c.relname AS name FROM pg_inherits i
             JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'observations'::regclass AND c.relname ~ '_p\d{8}$' LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN received_day SET DEFAULT %L::date',
                   p.name, to_date(substring(p.name FROM '_p(\d{8})$'), 'YYYYMMDD'));
  END LOOP;
END $$;

-- Down Migration
DO $$
DECLARE p record;
BEGIN
  FOR p IN SELECT c.relname AS name FROM pg_inherits i
             JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'observations'::regclass LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN received_day DROP DEFAULT', p.name);
  END LOOP;
END $$;
