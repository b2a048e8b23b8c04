-- The facts tables of the Sniff-timing statistics (docs/statistics.md), one row per match, per round
-- and per Sniff decision, as `sniff.facts.facts_rows` makes them. Computed once by
-- the engine when a match ends (service/storage/facts.py); every statistic is SQL over
-- these typed columns. Part of the event log's schema (run after schema.sql for a new
-- file; migrate_3_to_4.sql holds version 4's copy) and of the statistics' in-memory store.
-- Nothing in them is secret: a match has facts only once it is over.
-- Per-seat lists are indexed by seat (seat s is element s + 1 in SQL). The value of a round
-- for a side (docs/statistics.md, Words) is stored as a number with each round and decision: reading
-- lists in bulk costs DuckDB several times more than a scalar column.
-- Only match_facts has a key. A match's rounds and decisions are written in the transaction
-- that writes its match_facts row, and never again (a match already there is skipped whole),
-- so match_facts' key keeps them unique too; a key of their own cost the writer of a
-- simulation run more than the rest of the insert, and its index memory grows with the
-- rows (schema version 7 dropped them).

CREATE TABLE IF NOT EXISTS match_facts (
    match_id          VARCHAR   NOT NULL PRIMARY KEY,
    source            VARCHAR   NOT NULL CHECK (source IN ('served', 'imported', 'simulated')),
    run               VARCHAR,             -- the simulation run's id; NULL otherwise
    seats             TINYINT   NOT NULL CHECK (seats BETWEEN 2 AND 4),
    variant           VARCHAR   NOT NULL,  -- american | stubby | berndt | british
    players           VARCHAR[],           -- one name per seat (docs/records.md `players`); NULL unknown
    target            INTEGER   NOT NULL,
    round_limit       INTEGER,
    finished          BOOLEAN   NOT NULL,
    winner            TINYINT,             -- a seat of the winning side; NULL unfinished or drawn
    first_leader      TINYINT,             -- who led round 0 (the match's first mover)
    scores            INTEGER[] NOT NULL,  -- per seat, at the end (or now)
    rounds            SMALLINT  NOT NULL,  -- rounds dealt
    incomplete_rounds SMALLINT  NOT NULL   -- rounds without an end: cut by the win, or in play
);

-- One row per round dealt; the statistics use the complete ones (docs/statistics.md §1 columns first).
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
    scoring_placements      SMALLINT[] NOT NULL   -- per seat: placements that scored
);

-- One row per Sniff decision of a complete round (docs/statistics.md §3).
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
    same_outcome_after  SMALLINT NOT NULL         -- before and after this one (clustering)
);
