-- Reads of `sniff audit --db`. Each starts with "-- name: NAME". Parameters
-- are positional ($1, ...) because the service's Query RPC binds a list of
-- scalar values; a list of match ids travels as one text, the ids joined by
-- the unit separator (chr(31)), which DuckDB splits back into a list that
-- its index on events_all (match_id) can use.

-- name: matches
-- Every match of the log, in match_id order, with its number of events:
-- those with events, and those with settings but no event left; not the simulated
-- matches stored as facts (no events to audit: named, they are regenerated).
SELECT match_id, coalesce(e.events, 0) AS events
FROM (SELECT match_id, count(*) AS events FROM events_all GROUP BY match_id) AS e
FULL JOIN (
    SELECT match_id
    FROM match_settings_all
    WHERE run_id IS NULL
       OR run_id NOT IN (SELECT run_id FROM simulation_runs WHERE stored = 'facts')
) AS s USING (match_id)
ORDER BY match_id;

-- name: matches_of
-- The same for the named matches ($1: their ids joined by chr(31)).
SELECT match_id, coalesce(e.events, 0) AS events
FROM (
    SELECT match_id, count(*) AS events
    FROM events_all
    WHERE list_contains(string_split($1, chr(31)), match_id)
    GROUP BY match_id
) AS e
FULL JOIN (
    SELECT match_id
    FROM match_settings_all
    WHERE list_contains(string_split($1, chr(31)), match_id)
) AS s USING (match_id)
ORDER BY match_id;

-- name: summaries
-- What the typed tables say of each match, to check against its events.
SELECT
    match_id,
    s.match_id IS NOT NULL                AS has_settings,
    CAST(s.seats AS INTEGER)              AS seats,
    s.target,
    CAST(s.seed AS VARCHAR)               AS seed,
    s.variant,
    s.round_limit,
    s.players,
    s.source,
    s.seed_commitment,
    s.chained_at_migration,
    r.match_id IS NOT NULL                AS has_result,
    r.winner,
    r.scores,
    r.rounds,
    r.ended_by
FROM match_settings_all AS s
FULL JOIN match_results_all AS r USING (match_id);

-- name: events_between
-- The events of the matches whose ids lie from $1 to $2, each match in order.
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum,
    CAST(detail AS VARCHAR) AS detail, hash
FROM events_all
WHERE match_id >= $1 AND match_id <= $2
ORDER BY match_id, seq;

-- name: events_of
-- The events of the named matches ($1: ids joined by chr(31)), each in order.
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum,
    CAST(detail AS VARCHAR) AS detail, hash
FROM events_all
WHERE list_contains(string_split($1, chr(31)), match_id)
ORDER BY match_id, seq;

-- name: has_salvages
-- Whether the log was ever salvaged from a damaged journal: the salvages table
-- (service/storage/salvage.sql) exists only in such a log.
SELECT count(*) FROM duckdb_tables() WHERE table_name = 'salvages' AND schema_name = 'main';

-- name: salvaged
-- Each match named by a salvage, with when, where the damage was, and where the
-- damaged journal was kept.
SELECT unnest(match_ids) AS match_id, CAST(salvaged_at AS VARCHAR) AS salvaged_at,
       damaged_at, journal
FROM salvages
ORDER BY salvaged_at;

-- name: tournament_matches
-- Every match a tournament logged under a commitment to its deal seeds: its run id,
-- the commitment, how many seeds it covers (null in logs written before it was logged)
-- and its deal's index (match_created), its deal's seed, and the salt
-- revealed at its end (match_ended; null while none is logged). Seeds and deal indices
-- as text: a seed may exceed BIGINT.
SELECT
    c.match_id,
    c.detail->>'run_id'                AS run_id,
    c.detail->>'tournament_commitment' AS commitment,
    c.detail->>'tournament_deal'       AS deal,
    c.detail->>'tournament_deals'      AS committed_deals,
    c.detail->>'seed'                  AS seed,
    e.detail->>'tournament_salt'       AS salt
FROM events_all AS c
LEFT JOIN events_all AS e ON e.match_id = c.match_id AND e.kind = 'match_ended'
WHERE c.seq = 0 AND c.kind = 'match_created' AND c.detail->>'tournament_commitment' IS NOT NULL
ORDER BY run_id, c.match_id;
