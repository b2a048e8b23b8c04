-- American Sniff event log: the tables of a new file, at schema version 4.
--
-- Run once, when a log file is created. An existing file is brought to this
-- version by the migration steps (migrate_N_to_M.sql, listed in migrate.py)
-- instead, and views.sql is run after either. Table names ending in _all
-- hold the secrets of matches in play (seeds, hands, boneyards, drawn
-- tiles): only the service itself and a reader who names them explicitly
-- read them. docs/schema.md describes every table and view.

CREATE TABLE schema_version (
    version INTEGER NOT NULL
);

INSERT INTO schema_version (version) VALUES (4);

-- Append-only: one row per thing that happened to a match, in order.
CREATE TABLE events_all (
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
    hash         BLOB,               -- the event's link in its match's hash chain (docs/chain.md)
    PRIMARY KEY (match_id, seq)
);

-- Finding one match's events without scanning the log: the primary key's
-- index serves only lookups of both columns.
CREATE INDEX events_all_match_id ON events_all (match_id);

-- A match's settings in typed columns, written with its match_created event
-- (seq 0) in the same transaction, so no view ever casts a client's number
-- when it is read. A value the column cannot hold is refused when appended;
-- one migrated from an older file is NULL.
CREATE TABLE match_settings_all (
    match_id      VARCHAR     PRIMARY KEY,
    seats         SMALLINT,
    target        INTEGER,
    seed          HUGEINT,            -- secret while the match is in play
    rules_version VARCHAR,
    created_at    TIMESTAMPTZ NOT NULL,
    variant       VARCHAR     NOT NULL DEFAULT 'american',
    round_limit   INTEGER,
    players       VARCHAR[],          -- who played each seat (RECORD.md `players`)
    source        VARCHAR     NOT NULL DEFAULT 'served',   -- served | imported | simulated
    run_id        VARCHAR,            -- the simulation run that played it
    explicit_deals BOOLEAN    NOT NULL DEFAULT false,      -- some deal not made from the seed
    seed_commitment VARCHAR,          -- hex SHA-256 commitment to the seed (docs/chain.md)
    chained_at_migration INTEGER,     -- events chained without a secret when migrated to v3
    detail        JSON                -- the match_created detail (secrets in it hidden in play)
);

-- A finished match's result, written with its match_ended event, so that
-- listing matches never reads JSON of every match.
CREATE TABLE match_results_all (
    match_id      VARCHAR     PRIMARY KEY,
    finished_at   TIMESTAMPTZ NOT NULL,
    winner        INTEGER,            -- NULL: drawn at the round limit
    scores        INTEGER[],
    rounds        INTEGER,            -- rounds dealt
    ended_by      VARCHAR             -- target | round_limit
);

-- The facts of each finished match that the statistics need (STATS.md), computed by the
-- engine when its end is written (service/storage/facts.py) and written in the same
-- transaction; the same tables as analysis/stats/facts.sql. Nothing in them is secret: a
-- match has facts only once it is over.
CREATE TABLE IF NOT EXISTS match_facts (
    match_id          VARCHAR   NOT NULL PRIMARY KEY,
    source            VARCHAR   NOT NULL CHECK (source IN ('served', 'imported', 'simulated')),
    run               VARCHAR,             -- the simulation run's id; NULL otherwise
    seats             TINYINT   NOT NULL CHECK (seats BETWEEN 2 AND 4),
    variant           VARCHAR   NOT NULL,  -- american | stubby | berndt | british
    players           VARCHAR[],           -- one name per seat (RECORD.md `players`); NULL unknown
    target            INTEGER   NOT NULL,
    round_limit       INTEGER,
    finished          BOOLEAN   NOT NULL,
    winner            TINYINT,             -- a seat of the winning side; NULL unfinished or drawn
    first_leader      TINYINT,             -- who led round 0 (the match's first mover)
    scores            INTEGER[] NOT NULL,  -- per seat, at the end (or now)
    rounds            SMALLINT  NOT NULL,  -- rounds dealt
    incomplete_rounds SMALLINT  NOT NULL   -- rounds without an end: cut by the win, or in play
);

-- One row per round dealt; the statistics use the complete ones (STATS.md §1 columns first).
CREATE TABLE IF NOT EXISTS round_facts (
    match_id                VARCHAR    NOT NULL,
    round                   SMALLINT   NOT NULL,  -- from 0
    seats                   TINYINT    NOT NULL,
    variant                 VARCHAR    NOT NULL,
    complete                BOOLEAN    NOT NULL,  -- ended by a domino or a block
    leader                  TINYINT    NOT NULL,
    sniff                   BOOLEAN    NOT NULL,
    maker                   TINYINT,              -- seat that made the Sniff
    sniff_index             SMALLINT,             -- placement index of the Sniff
    "double"                TINYINT,              -- d of the Sniff d-d
    orientation             VARCHAR,              -- cross | inline where the variant has a choice
    covered_after           SMALLINT,             -- placements after the Sniff's until both lines held
    net                     INTEGER[],            -- per seat: its side's round net result
    value                   DOUBLE,               -- value of the round for the maker's side
                                                  -- (the leader's without a Sniff): its net
                                                  -- minus the other sides' mean net
    sniff_points            INTEGER    NOT NULL,
    sniff_points_maker_side INTEGER    NOT NULL,
    sniff_points_others     INTEGER    NOT NULL,
    ending                  VARCHAR,              -- domino | blocked; NULL when incomplete
    finisher                TINYINT,              -- the seat that dominoed
    points                  INTEGER[]  NOT NULL,  -- per seat: points of its own placements
    deductions              INTEGER[],            -- per seat: taken from its hand at the end
    placements              SMALLINT[] NOT NULL,  -- per seat
    scoring_placements      SMALLINT[] NOT NULL,  -- per seat: placements that scored
    PRIMARY KEY (match_id, round)
);

-- One row per Sniff decision of a complete round (STATS.md §3).
CREATE TABLE IF NOT EXISTS sniff_decisions (
    match_id        VARCHAR  NOT NULL,
    round           SMALLINT NOT NULL,
    seats           TINYINT  NOT NULL,
    seat            TINYINT  NOT NULL,            -- the mover
    placement_index SMALLINT NOT NULL,            -- the index the mover's placement got
    "double"        TINYINT  NOT NULL,            -- the highest double the mover could place
    outcome         VARCHAR  NOT NULL CHECK (outcome IN (
                        'played', 'held_self', 'held_partner', 'held_other', 'held_never')),
    mover_is_leader BOOLEAN  NOT NULL,
    value           DOUBLE   NOT NULL,            -- value of the round for the mover's side
    same_outcome_before SMALLINT NOT NULL,        -- decisions of this round with this outcome
    same_outcome_after  SMALLINT NOT NULL,        -- before and after this one (clustering)
    PRIMARY KEY (match_id, round, placement_index)
);
