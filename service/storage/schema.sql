-- American Sniff event log, schema version 1.
--
-- Re-runnable: every statement is IF NOT EXISTS or OR REPLACE, so opening a
-- log read-write runs this whole file and refreshes the views. The Python
-- side checks schema_version BEFORE running it, so a file written by a newer
-- release is refused instead of having its views replaced by older ones.
-- A later version adds a migration step in log.py and bumps the number below.

CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);

INSERT INTO schema_version (version)
SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM schema_version);

-- Append-only: one row per thing that happened to a match, in order.
CREATE TABLE IF NOT EXISTS events (
    match_id     VARCHAR     NOT NULL,
    seq          INTEGER     NOT NULL CHECK (seq >= 0),   -- 0, 1, 2, ... per match, no gaps
    kind         VARCHAR     NOT NULL CHECK (kind IN (
                     'match_created', 'round_dealt', 'action', 'round_ended', 'match_ended')),
    round        INTEGER,            -- 0-based; NULL for match-level events
    action_index INTEGER,            -- 0-based within its round (the lead is 0)
    seat         INTEGER,            -- actor; leader for a deal, finisher, winner
    move         VARCHAR,            -- RECORD.md notation: '1-1@1-4:low', 'draw', 'pass'
    drawn        VARCHAR,            -- the tile a draw took, like '2-5'
    points       INTEGER,            -- points scored by this action
    ends_sum     INTEGER,            -- sum of the open ends after this action
    detail       JSON,               -- kind-specific payload, unpacked by the views
    logged_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (match_id, seq)
);

-- One row per match: its settings and, once it is over, its result.
CREATE OR REPLACE VIEW matches AS
SELECT
    c.match_id,
    CAST(c.detail ->> '$.seats' AS INTEGER)         AS seats,
    CAST(c.detail ->> '$.target' AS INTEGER)        AS target,
    CAST(c.detail ->> '$.seed' AS HUGEINT)          AS seed,
    c.detail ->> '$.rules_version'                  AS rules_version,
    c.logged_at                                     AS created_at,
    e.match_id IS NOT NULL                          AS finished,
    CAST(e.detail ->> '$.winner' AS INTEGER)        AS winner,
    CAST(e.detail -> '$.scores' AS INTEGER[])       AS scores,
    e.logged_at                                     AS ended_at,
    c.detail                                        AS detail
FROM events AS c
LEFT JOIN events AS e
    ON e.match_id = c.match_id AND e.kind = 'match_ended'
WHERE c.kind = 'match_created';

CREATE OR REPLACE VIEW deals AS
SELECT
    match_id,
    round,
    seq,
    CAST(detail -> '$.hands' AS VARCHAR[][])        AS hands,
    CAST(detail -> '$.boneyard' AS VARCHAR[])       AS boneyard,
    CAST(detail ->> '$.leader' AS INTEGER)          AS leader,
    detail ->> '$.leader_choice'                    AS leader_choice,
    logged_at
FROM events
WHERE kind = 'round_dealt';

-- move_type and tile split the notation once, here, so no caller re-parses it.
CREATE OR REPLACE VIEW actions AS
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
    END                                             AS move_type,
    CASE
        WHEN move IN ('draw', 'pass') THEN NULL
        ELSE split_part(move, '@', 1)
    END                                             AS tile,
    drawn,
    points,
    ends_sum,
    logged_at
FROM events
WHERE kind = 'action';

-- "end" is a keyword, so the round's end ('domino' | 'blocked') is `ending`.
CREATE OR REPLACE VIEW round_ends AS
SELECT
    match_id,
    round,
    seq,
    detail ->> '$.end'                              AS ending,
    CAST(detail ->> '$.finisher' AS INTEGER)        AS finisher,
    CAST(detail -> '$.pips' AS INTEGER[])           AS pips,
    CAST(detail -> '$.deductions' AS INTEGER[])     AS deductions,
    CAST(detail -> '$.scores' AS INTEGER[])         AS scores,
    logged_at
FROM events
WHERE kind = 'round_ended';

CREATE OR REPLACE VIEW match_ends AS
SELECT
    match_id,
    seq,
    CAST(detail ->> '$.winner' AS INTEGER)          AS winner,
    CAST(detail -> '$.scores' AS INTEGER[])         AS scores,
    logged_at
FROM events
WHERE kind = 'match_ended';
