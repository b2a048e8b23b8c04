-- The views of the event log, schema version 3: re-created (OR REPLACE) at
-- every read-write open, after the tables are created or migrated.
--
-- Two families. The `*_all` views (and the tables events_all,
-- match_settings_all and match_results_all) show everything. The plain ones
-- (events, matches, deals, actions, round_ends, match_ends, rounds,
-- match_seats) are what analysts read: they show a match's secrets -- its
-- seed, the salt of its commitment, its chain secret, every deal's hands and
-- boneyard, the tile each draw took -- only once the match is over (it has a
-- row in match_results_all); before that those columns are NULL and the keys
-- are left out of `detail`. Column names and types of earlier versions are
-- kept, so queries written for them keep working; version 3 adds columns at
-- the end and the views rounds and match_seats.
--
-- JSON is read with TRY_CAST: a value that does not fit its column reads as
-- NULL in its own row instead of failing every query over the view.
-- docs/schema.md describes every column.

-- -- everything ---------------------------------------------------------------

-- One row per match: its settings and, once it is over, its result. Both
-- come from typed tables, so no row's JSON is read to list matches.
CREATE OR REPLACE VIEW matches_all AS
SELECT
    s.match_id,
    CAST(s.seats AS INTEGER)                            AS seats,
    s.target,
    s.seed,
    s.rules_version,
    s.created_at,
    r.match_id IS NOT NULL                              AS finished,
    r.winner,
    r.scores,
    r.finished_at                                       AS ended_at,
    s.detail,
    s.variant,
    s.round_limit,
    s.players,
    s.source,
    s.run_id,
    s.explicit_deals,
    s.seed_commitment,
    r.rounds,
    r.ended_by
FROM match_settings_all AS s
LEFT JOIN match_results_all AS r
    ON r.match_id = s.match_id;

CREATE OR REPLACE VIEW deals_all AS
SELECT
    match_id,
    round,
    seq,
    TRY_CAST(detail -> '$.hands' AS VARCHAR[][])        AS hands,
    TRY_CAST(detail -> '$.boneyard' AS VARCHAR[])       AS boneyard,
    TRY_CAST(detail ->> '$.leader' AS INTEGER)          AS leader,
    detail ->> '$.leader_choice'                        AS leader_choice,
    logged_at,
    coalesce(detail ->> '$.dealt_by', 'seed')           AS dealt_by
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
        ELSE split_part(split_part(move, '@', 1), '/', 1)
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
        WHEN kind = 'match_created'
            THEN json_merge_patch(detail, '{"seed": null, "seed_salt": null, "chain_secret": null}')
        WHEN kind = 'round_dealt'
            THEN json_merge_patch(detail, '{"hands": null, "boneyard": null}')
        ELSE detail
    END                                                 AS detail,
    logged_at,
    CASE WHEN revealed THEN lower(hex(hash)) END            AS hash
FROM (
    SELECT *, match_id IN (SELECT match_id FROM match_results_all) AS revealed
    FROM events_all
);

CREATE OR REPLACE VIEW matches AS
SELECT
    * REPLACE (
        CASE WHEN finished THEN seed END AS seed,
        CASE
            WHEN finished OR detail IS NULL THEN detail
            ELSE json_merge_patch(
                detail, '{"seed": null, "seed_salt": null, "chain_secret": null}'
            )
        END AS detail
    )
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
    logged_at,
    dealt_by
FROM (
    SELECT *, match_id IN (SELECT match_id FROM match_results_all) AS revealed
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
    SELECT *, match_id IN (SELECT match_id FROM match_results_all) AS revealed
    FROM actions_all
);

-- -- summaries that would otherwise need self-joins -----------------------------

-- One row per round dealt: who led and why, what was played, how it ended.
-- `ending` is NULL for a round cut short by the winning placement, and for
-- the round in play.
CREATE OR REPLACE VIEW rounds AS
WITH played AS (
    SELECT
        match_id,
        round,
        count(*)                                                AS actions,
        count(*) FILTER (WHERE move_type IN ('lead', 'place'))  AS placements,
        count(*) FILTER (WHERE move_type = 'draw')              AS draws,
        count(*) FILTER (WHERE move_type = 'pass')              AS passes,
        coalesce(sum(points), 0)                                AS points
    FROM actions_all
    GROUP BY match_id, round
)
SELECT
    d.match_id,
    d.round,
    m.seats,
    m.variant,
    d.leader,
    d.leader_choice,
    d.dealt_by,
    coalesce(p.actions, 0)                              AS actions,
    coalesce(p.placements, 0)                           AS placements,
    coalesce(p.draws, 0)                                AS draws,
    coalesce(p.passes, 0)                               AS passes,
    coalesce(p.points, 0)                               AS points,
    e.ending,
    e.finisher,
    e.pips,
    e.deductions,
    e.scores
FROM deals_all AS d
JOIN matches_all AS m ON m.match_id = d.match_id
LEFT JOIN played AS p ON p.match_id = d.match_id AND p.round = d.round
LEFT JOIN round_ends AS e ON e.match_id = d.match_id AND e.round = d.round;

-- One row per seat of each match: who played it, its final score, whether it
-- won (with partners, seats 0+2 and 1+3 share the result). `won` is NULL
-- while the match is in play, false for everyone in a draw.
CREATE OR REPLACE VIEW match_seats AS
SELECT
    m.match_id,
    s.seat,
    m.players[s.seat + 1]                               AS player,
    m.seats,
    m.variant,
    m.source,
    m.created_at,
    m.finished,
    m.scores[s.seat + 1]                                AS score,
    CASE
        WHEN NOT m.finished THEN NULL
        WHEN m.winner IS NULL THEN false
        ELSE m.winner = s.seat OR (m.seats = 4 AND m.winner % 2 = s.seat % 2)
    END                                                 AS won
FROM matches_all AS m,
    LATERAL (SELECT unnest(range(m.seats)) AS seat) AS s;
