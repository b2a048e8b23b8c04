-- The views of the event log, schema version 2: re-created (OR REPLACE) at
-- every read-write open, after the tables are created or migrated.
--
-- Two families. The `*_all` views (and the tables events_all and
-- match_settings_all) show everything. The plain ones (events, matches,
-- deals, actions, round_ends, match_ends) are what analysts read: they show
-- a match's secrets -- its seed, every deal's hands and boneyard, the tile
-- each draw took -- only once the match is over (it has a match_ended
-- event); before that those columns are NULL and the keys are left out of
-- `detail`. Column names and types are those of version 1, so queries
-- written for it keep working.
--
-- JSON is read with TRY_CAST: a value that does not fit its column reads as
-- NULL in its own row instead of failing every query over the view.
-- docs/schema.md describes every column.

-- -- everything ---------------------------------------------------------------

-- One row per match: its settings and, once it is over, its result.
CREATE OR REPLACE VIEW matches_all AS
SELECT
    s.match_id,
    CAST(s.seats AS INTEGER)                            AS seats,
    s.target,
    s.seed,
    s.rules_version,
    s.created_at,
    e.match_id IS NOT NULL                              AS finished,
    TRY_CAST(e.detail ->> '$.winner' AS INTEGER)        AS winner,
    TRY_CAST(e.detail -> '$.scores' AS INTEGER[])       AS scores,
    e.logged_at                                         AS ended_at,
    c.detail                                            AS detail
FROM match_settings_all AS s
JOIN events_all AS c
    ON c.match_id = s.match_id AND c.seq = 0
LEFT JOIN events_all AS e
    ON e.match_id = s.match_id AND e.kind = 'match_ended';

CREATE OR REPLACE VIEW deals_all AS
SELECT
    match_id,
    round,
    seq,
    TRY_CAST(detail -> '$.hands' AS VARCHAR[][])        AS hands,
    TRY_CAST(detail -> '$.boneyard' AS VARCHAR[])       AS boneyard,
    TRY_CAST(detail ->> '$.leader' AS INTEGER)          AS leader,
    detail ->> '$.leader_choice'                        AS leader_choice,
    logged_at
FROM events_all
WHERE kind = 'round_dealt';

-- move_type and tile split the notation once, here, so no caller re-parses it.
CREATE OR REPLACE VIEW actions_all AS
SELECT
    match_id,
    round,
    action_index,
    seq,
    seat,
    move,
    CASE
        WHEN move = 'draw' THEN 'draw'
        WHEN move = 'pass' THEN 'pass'
        WHEN contains(move, '@') THEN 'place'
        ELSE 'lead'
    END                                                 AS move_type,
    CASE
        WHEN move IN ('draw', 'pass') THEN NULL
        ELSE split_part(move, '@', 1)
    END                                                 AS tile,
    drawn,
    points,
    ends_sum,
    logged_at
FROM events_all
WHERE kind = 'action';

-- -- no secrets in these: one view each -----------------------------------------

-- "end" is a keyword, so the round's end ('domino' | 'blocked') is `ending`.
CREATE OR REPLACE VIEW round_ends AS
SELECT
    match_id,
    round,
    seq,
    detail ->> '$.end'                                  AS ending,
    TRY_CAST(detail ->> '$.finisher' AS INTEGER)        AS finisher,
    TRY_CAST(detail -> '$.pips' AS INTEGER[])           AS pips,
    TRY_CAST(detail -> '$.deductions' AS INTEGER[])     AS deductions,
    TRY_CAST(detail -> '$.scores' AS INTEGER[])         AS scores,
    logged_at
FROM events_all
WHERE kind = 'round_ended';

-- A match is over once it has a row here: the public views then show its secrets.
CREATE OR REPLACE VIEW match_ends AS
SELECT
    match_id,
    seq,
    TRY_CAST(detail ->> '$.winner' AS INTEGER)          AS winner,
    TRY_CAST(detail -> '$.scores' AS INTEGER[])         AS scores,
    logged_at
FROM events_all
WHERE kind = 'match_ended';

-- -- secrets hidden while a match is in play ------------------------------------

CREATE OR REPLACE VIEW events AS
SELECT
    match_id,
    seq,
    kind,
    round,
    action_index,
    seat,
    move,
    CASE WHEN revealed THEN drawn END                       AS drawn,
    points,
    ends_sum,
    CASE
        WHEN revealed OR detail IS NULL THEN detail
        WHEN kind = 'match_created' THEN json_merge_patch(detail, '{"seed": null}')
        WHEN kind = 'round_dealt'
            THEN json_merge_patch(detail, '{"hands": null, "boneyard": null}')
        ELSE detail
    END                                                 AS detail,
    logged_at
FROM (
    SELECT *, match_id IN (SELECT match_id FROM match_ends) AS revealed
    FROM events_all
);

CREATE OR REPLACE VIEW matches AS
SELECT
    match_id,
    seats,
    target,
    CASE WHEN finished THEN seed END                    AS seed,
    rules_version,
    created_at,
    finished,
    winner,
    scores,
    ended_at,
    CASE
        WHEN finished OR detail IS NULL THEN detail
        ELSE json_merge_patch(detail, '{"seed": null}')
    END                                                 AS detail
FROM matches_all;

CREATE OR REPLACE VIEW deals AS
SELECT
    match_id,
    round,
    seq,
    CASE WHEN revealed THEN hands END                       AS hands,
    CASE WHEN revealed THEN boneyard END                    AS boneyard,
    leader,
    leader_choice,
    logged_at
FROM (
    SELECT *, match_id IN (SELECT match_id FROM match_ends) AS revealed
    FROM deals_all
);

CREATE OR REPLACE VIEW actions AS
SELECT
    match_id,
    round,
    action_index,
    seq,
    seat,
    move,
    move_type,
    tile,
    CASE WHEN revealed THEN drawn END                       AS drawn,
    points,
    ends_sum,
    logged_at
FROM (
    SELECT *, match_id IN (SELECT match_id FROM match_ends) AS revealed
    FROM actions_all
);
