-- Reads of `sniff matches` and `sniff replay`. Each starts with "-- name: NAME".
-- Parameters are positional ($1, $2, ...): the service's Query RPC binds a
-- list of values, and the offline reader binds the same list.

-- name: list_matches
-- One row per match, newest first. Parameters:
--   $1 seats (or NULL), $2 since, $3 until (ISO text, or NULL; since <= created < until),
--   $4 finished (true/false, or NULL), $5 winner seat (or NULL; with partners
--   either partner's seat matches), $6 limit (or NULL for all).
--
-- The matches view reads two typed tables (settings and results, one row
-- per match), so neither the listing nor a condition on the result reads
-- any event. Only the rounds of listed matches still in play are counted
-- from their events, by match id (the index on events_all (match_id)).
WITH listed AS (
    SELECT match_id, seats, variant, rules_version, created_at, finished, winner, scores, rounds
    FROM matches
    WHERE ($1 IS NULL OR seats = $1)
      AND ($2 IS NULL OR created_at >= CAST($2 AS TIMESTAMPTZ))
      AND ($3 IS NULL OR created_at < CAST($3 AS TIMESTAMPTZ))
      AND ($4 IS NULL OR finished = $4)
      AND ($5 IS NULL OR winner = $5 OR (seats = 4 AND winner % 2 = $5 % 2))
    ORDER BY created_at DESC, match_id
    LIMIT $6
),
in_play AS (
    SELECT match_id, count(*) FILTER (WHERE kind = 'round_dealt') AS rounds
    FROM events_all
    WHERE match_id IN (SELECT match_id FROM listed WHERE NOT finished)
    GROUP BY match_id
)
SELECT
    listed.* EXCLUDE (rounds),
    coalesce(listed.rounds, in_play.rounds, 0)   AS rounds
FROM listed
LEFT JOIN in_play USING (match_id)
ORDER BY created_at DESC, match_id;

-- name: match_events
-- Every event of one match in order, each kind's detail unpacked into
-- columns with the same JSON paths as the views of schema.sql.
-- Parameters: $1 match_id, $2 reveal (true to return drawn tiles and deals).
--
-- The table is read with one filter, match_id = $1, and nothing else: DuckDB
-- answers such a scan from the index on events_all (match_id) (schema
-- version 3 has it), but turns back to a full scan as soon as the scan carries a second
-- filter (the views' kind = '...' is one), so the views cannot be used here.
-- Hidden tiles (what a draw took, the deals) leave the log only when asked
-- for and only for a finished match: while a match is in play they stay
-- hidden, as the log's public views keep them.
WITH ev AS (
    SELECT * FROM events_all WHERE match_id = $1
),
shown AS (
    SELECT *, coalesce($2, false) AND bool_or(kind = 'match_ended') OVER () AS revealed
    FROM ev
)
SELECT
    seq,
    kind,
    round,
    action_index,
    seat,
    move,
    CASE WHEN revealed THEN drawn END                                        AS drawn,
    points,
    ends_sum,
    revealed,
    CASE WHEN kind = 'match_created' THEN CAST(detail ->> '$.seats' AS INTEGER) END
                                                                             AS seats,
    CASE WHEN kind = 'match_created' THEN CAST(detail ->> '$.target' AS INTEGER) END
                                                                             AS target,
    CASE WHEN kind = 'match_created' THEN detail ->> '$.rules_version' END   AS rules_version,
    CASE WHEN kind = 'match_created' THEN detail ->> '$.variant' END         AS variant,
    CASE WHEN kind = 'match_created' THEN CAST(detail ->> '$.round_limit' AS INTEGER) END
                                                                             AS round_limit,
    CASE WHEN kind = 'match_created' THEN logged_at END                      AS created_at,
    CASE WHEN kind = 'round_dealt' THEN CAST(detail ->> '$.leader' AS INTEGER) END
                                                                             AS leader,
    CASE WHEN kind = 'round_dealt' THEN detail ->> '$.leader_choice' END     AS leader_choice,
    CASE WHEN kind = 'round_dealt' AND revealed
         THEN CAST(detail -> '$.hands' AS VARCHAR[][]) END                   AS hands,
    CASE WHEN kind = 'round_dealt' AND revealed
         THEN CAST(detail -> '$.boneyard' AS VARCHAR[]) END                  AS boneyard,
    CASE WHEN kind = 'round_ended' THEN detail ->> '$.end' END               AS ending,
    CASE WHEN kind = 'round_ended' THEN CAST(detail ->> '$.finisher' AS INTEGER) END
                                                                             AS finisher,
    CASE WHEN kind = 'round_ended' THEN CAST(detail -> '$.pips' AS INTEGER[]) END
                                                                             AS pips,
    CASE WHEN kind = 'round_ended' THEN CAST(detail -> '$.deductions' AS INTEGER[]) END
                                                                             AS deductions,
    CASE WHEN kind IN ('round_ended', 'match_ended')
         THEN CAST(detail -> '$.scores' AS INTEGER[]) END                    AS scores,
    CASE WHEN kind = 'match_ended' THEN CAST(detail ->> '$.winner' AS INTEGER) END
                                                                             AS winner,
    CASE WHEN kind = 'action' THEN detail ->> '$.timeout' END                AS timeout_policy,
    CASE WHEN kind = 'match_ended' THEN CAST(detail ->> '$.forfeit.seat' AS INTEGER) END
                                                                             AS forfeited_seat
FROM shown
ORDER BY seq;
