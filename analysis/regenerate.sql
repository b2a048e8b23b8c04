-- Reads of the regeneration of simulated matches stored as facts (analysis/regenerate.py).
-- Each starts with "-- name: NAME"; positional parameters, as the Query RPC binds them.

-- name: facts_only_of
-- Which of the named matches ($1: ids joined by chr(31)) are stored as facts only, with
-- their seed and everything of their run that decides them.
SELECT s.match_id, CAST(s.seed AS VARCHAR) AS seed, r.run_id, r.matches, r.seats, r.bots,
       r.players, CAST(r.seed AS VARCHAR) AS run_seed, r.variant, r.target, r.round_limit,
       r.stored, r.sim_version, r.code_version
FROM match_settings_all AS s
JOIN simulation_runs AS r ON r.run_id = s.run_id AND r.stored = 'facts'
WHERE list_contains(string_split($1, chr(31)), s.match_id)
ORDER BY s.match_id;

-- name: facts_only_count
-- How many matches of the log are stored as facts only.
SELECT count(*) AS matches
FROM match_settings_all AS s
JOIN simulation_runs AS r ON r.run_id = s.run_id AND r.stored = 'facts';

-- name: insert_regenerated
-- Regenerated events (_regenerated: events.arrow_schema, logged_at null) into an in-memory
-- copy of the log's tables.
INSERT INTO events_all BY NAME
SELECT * REPLACE (coalesce(logged_at, now()) AS logged_at) FROM _regenerated;
