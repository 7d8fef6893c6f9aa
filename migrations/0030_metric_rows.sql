-- Up Migration

-- Each call counted once (apps/server/src/otlp/store-metrics.ts, compact.ts): a
-- histogram row added from an OTLP metric point says so, so that spans of the
-- same calls arriving after it (metrics first, spans later) replace it before
-- the minute is compacted. `metric_from`: the start of the interval the point
-- covered (NULL: the row is spans', or pairing's); `metric_whole_view`: the
-- point named no route or operation (`http.client.request.duration` by method
-- and server), so it stands for all the service's calls of its view.
-- `metric_streams.series_id`: the series a stream feeds, so a series can say
-- whether its calls are counted from spans or from metrics.
-- In one DO block: on Citus a query string holds one command.
DO $$
BEGIN
  ALTER TABLE histograms ADD COLUMN metric_from timestamptz;
  ALTER TABLE histograms ADD COLUMN metric_whole_view boolean;
  ALTER TABLE metric_streams ADD COLUMN series_id bigint;
  CREATE INDEX metric_streams_series ON metric_streams (series_id);
END
$$;

-- Down Migration
DROP INDEX metric_streams_series;
ALTER TABLE metric_streams DROP COLUMN series_id;
ALTER TABLE histograms DROP COLUMN metric_whole_view;
ALTER TABLE histograms DROP COLUMN metric_from;
