-- Named statements of the event log. Each starts with "-- name: NAME" and
-- runs the text up to the next name. Values are always bound ($name), never
-- pasted in; `_pending_events` and `_pending_settings` are the Arrow tables
-- the writer registers. The service's own reads name the tables (`*_all`):
-- it must see every secret to rebuild its matches.
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

-- name: insert_pending_settings
INSERT INTO match_settings_all (match_id, seats, target, seed, rules_version, created_at)
SELECT match_id, seats, target, CAST(seed AS HUGEINT), rules_version, created_at
FROM _pending_settings;

-- name: insert_pending_events
INSERT INTO events_all (
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
FROM events_all
GROUP BY match_id
HAVING count(*) FILTER (WHERE kind = 'match_ended') = 0;

-- name: next_seq_of
-- For a match the writer does not keep in memory (a finished one).
SELECT max(seq) + 1 AS next_seq
FROM events_all
WHERE match_id = $match_id;

-- name: events_for
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR), epoch_us(logged_at)
FROM events_all
WHERE match_id = $match_id
ORDER BY seq;

-- name: events_by_match
-- One ordered pass over every match (or the unfinished ones), for start-up.
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR), epoch_us(logged_at)
FROM events_all
WHERE NOT $unfinished_only
   OR match_id NOT IN (SELECT match_id FROM events_all WHERE kind = 'match_ended')
ORDER BY match_id, seq;

-- name: match_ids
-- In the order the matches began; unfinished = no match_ended event yet.
SELECT match_id
FROM events_all
GROUP BY match_id
HAVING NOT $unfinished_only OR count(*) FILTER (WHERE kind = 'match_ended') = 0
ORDER BY min(logged_at), match_id;

-- name: count
SELECT count(*) FROM events_all;

-- name: next_seq_of_all
-- Where every match's sequence goes on: for loading a journal after a crash.
SELECT match_id, max(seq) + 1 AS next_seq
FROM events_all
GROUP BY match_id;

-- name: overlay_journal
-- An offline reader's view of rows a journal holds and the file lacks,
-- without writing the file: temporary views named like the tables shadow
-- them (DuckDB looks in `temp` first, also when binding the file's views).
-- {log} is the file's catalog, quoted: the only name this package pastes.
CREATE TEMP VIEW events_all AS
SELECT * FROM {log}.main.events_all
UNION ALL
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS JSON), logged_at
FROM _journal_events;
CREATE TEMP VIEW match_settings_all AS
SELECT * FROM {log}.main.match_settings_all
UNION ALL
SELECT match_id, seats, target, CAST(seed AS HUGEINT), rules_version, created_at
FROM _journal_settings;

-- name: current_database
SELECT current_database();
