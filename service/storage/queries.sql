-- Named statements of the event log. Each starts with "-- name: NAME" and
-- runs the text up to the next name. Values are always bound ($name), never
-- pasted in; `_pending_events` is the Arrow table the writer registers.
-- Events are read with logged_at as epoch microseconds: converting those in
-- Python is several times faster than DuckDB's TIMESTAMPTZ to datetime.

-- name: schema_version_table_exists
SELECT count(*) > 0
FROM duckdb_tables()
WHERE database_name = current_database()
  AND schema_name = 'main'
  AND table_name = 'schema_version';

-- name: user_table_count
SELECT count(*)
FROM duckdb_tables()
WHERE database_name = current_database() AND NOT internal;

-- name: schema_version
SELECT max(version) FROM schema_version;

-- name: insert_pending_events
INSERT INTO events (
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, detail, logged_at
)
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS JSON), logged_at
FROM _pending_events;

-- name: next_seq_of_unfinished
-- The writer's starting point: where each open match's sequence goes on.
SELECT match_id, max(seq) + 1 AS next_seq
FROM events
GROUP BY match_id
HAVING count(*) FILTER (WHERE kind = 'match_ended') = 0;

-- name: next_seq_of
-- For a match the writer does not keep in memory (a finished one).
SELECT max(seq) + 1 AS next_seq
FROM events
WHERE match_id = $match_id;

-- name: events_for
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR), epoch_us(logged_at)
FROM events
WHERE match_id = $match_id
ORDER BY seq;

-- name: events_by_match
-- One ordered pass over every match (or the unfinished ones), for start-up.
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR), epoch_us(logged_at)
FROM events
WHERE NOT $unfinished_only
   OR match_id NOT IN (SELECT match_id FROM events WHERE kind = 'match_ended')
ORDER BY match_id, seq;

-- name: match_ids
-- In the order the matches began; unfinished = no match_ended event yet.
SELECT match_id
FROM events
GROUP BY match_id
HAVING NOT $unfinished_only OR count(*) FILTER (WHERE kind = 'match_ended') = 0
ORDER BY min(logged_at), match_id;

-- name: count
SELECT count(*) FROM events;

-- name: next_seq_of_all
-- Where every match's sequence goes on: for loading a journal after a crash.
SELECT match_id, max(seq) + 1 AS next_seq
FROM events
GROUP BY match_id;
