-- Up Migration

-- Which pass last fed each detection shard (apps/server/src/regressions/
-- stored-index.ts): a pass marks its shards when it begins and again, with a
-- token of its own, once every batch is committed. A server whose end mark is
-- still there at its next pass knows nobody else has written those shards'
-- detector states since, so it keeps their checkpoint times in memory instead
-- of reading every row of regress_state again. Only a pass holding a shard's
-- advisory lock writes its row (apart from detect_leases, which renewals lock).
CREATE TABLE detect_shard_marks (
  shard   integer PRIMARY KEY CHECK (shard >= 0),
  fed_by  text NOT NULL
);

-- Down Migration

DROP TABLE detect_shard_marks;
