-- Reads of `sniff export`. Each starts with "-- name: NAME". The export_*
-- queries read one day of matches (by creation, UTC) of one view, so that each
-- is one query within a live service's time limit. Parameters: $1 the day
-- (YYYY-MM-DD), $2 true to take matches in play too (--include-unfinished),
-- $3 the named match ids joined by chr(31), or NULL for all (the Query RPC
-- binds scalar values only). The `*_all` views are read: a finished match
-- hides nothing, and one in play is only exported when asked for.

-- name: finished
SELECT match_id FROM match_results_all;

-- name: creation_days
SELECT match_id, CAST(timezone('UTC', created_at) AS DATE) AS created_date
FROM match_settings_all;

-- name: export_matches
WITH chosen AS (
    SELECT match_id
    FROM match_settings_all
    WHERE CAST(timezone('UTC', created_at) AS DATE) = CAST($1 AS DATE)
      AND ($2 OR match_id IN (SELECT match_id FROM match_results_all))
      AND ($3 IS NULL OR list_contains(string_split($3, chr(31)), match_id))
)
SELECT * FROM matches_all
WHERE match_id IN (SELECT match_id FROM chosen)
ORDER BY match_id;

-- name: export_deals
WITH chosen AS (
    SELECT match_id
    FROM match_settings_all
    WHERE CAST(timezone('UTC', created_at) AS DATE) = CAST($1 AS DATE)
      AND ($2 OR match_id IN (SELECT match_id FROM match_results_all))
      AND ($3 IS NULL OR list_contains(string_split($3, chr(31)), match_id))
)
SELECT * FROM deals_all
WHERE match_id IN (SELECT match_id FROM chosen)
ORDER BY match_id, seq;

-- name: export_actions
WITH chosen AS (
    SELECT match_id
    FROM match_settings_all
    WHERE CAST(timezone('UTC', created_at) AS DATE) = CAST($1 AS DATE)
      AND ($2 OR match_id IN (SELECT match_id FROM match_results_all))
      AND ($3 IS NULL OR list_contains(string_split($3, chr(31)), match_id))
)
SELECT * FROM actions_all
WHERE match_id IN (SELECT match_id FROM chosen)
ORDER BY match_id, seq;

-- name: export_round_ends
WITH chosen AS (
    SELECT match_id
    FROM match_settings_all
    WHERE CAST(timezone('UTC', created_at) AS DATE) = CAST($1 AS DATE)
      AND ($2 OR match_id IN (SELECT match_id FROM match_results_all))
      AND ($3 IS NULL OR list_contains(string_split($3, chr(31)), match_id))
)
SELECT * FROM round_ends
WHERE match_id IN (SELECT match_id FROM chosen)
ORDER BY match_id, seq;

-- name: export_match_ends
WITH chosen AS (
    SELECT match_id
    FROM match_settings_all
    WHERE CAST(timezone('UTC', created_at) AS DATE) = CAST($1 AS DATE)
      AND ($2 OR match_id IN (SELECT match_id FROM match_results_all))
      AND ($3 IS NULL OR list_contains(string_split($3, chr(31)), match_id))
)
SELECT * FROM match_ends
WHERE match_id IN (SELECT match_id FROM chosen)
ORDER BY match_id, seq;
