-- Schema version 6 to 7, in the one transaction that opens the file.
--
-- Version 7 drops the primary keys of round_facts and sniff_decisions (facts.sql says why:
-- match_facts' key already keeps a match's facts unique, and maintaining the two keys cost a
-- simulation run's writer more than the rest of its insert). DuckDB cannot drop a
-- constraint, so each table is made again without it and its rows copied, in their order.
-- The columns are unchanged.

CREATE TABLE round_facts_v7 (
    match_id                VARCHAR    NOT NULL,
    round                   SMALLINT   NOT NULL,
    seats                   TINYINT    NOT NULL,
    variant                 VARCHAR    NOT NULL,
    complete                BOOLEAN    NOT NULL,
    leader                  TINYINT    NOT NULL,
    sniff                   BOOLEAN    NOT NULL,
    maker                   TINYINT,
    sniff_index             SMALLINT,
    "double"                TINYINT,
    orientation             VARCHAR,
    covered_after           SMALLINT,
    net                     INTEGER[],
    value                   DOUBLE,
    sniff_points            INTEGER    NOT NULL,
    sniff_points_maker_side INTEGER    NOT NULL,
    sniff_points_others     INTEGER    NOT NULL,
    ending                  VARCHAR,
    finisher                TINYINT,
    points                  INTEGER[]  NOT NULL,
    deductions              INTEGER[],
    placements              SMALLINT[] NOT NULL,
    scoring_placements      SMALLINT[] NOT NULL
);
INSERT INTO round_facts_v7 SELECT * FROM round_facts;
DROP TABLE round_facts;
ALTER TABLE round_facts_v7 RENAME TO round_facts;

CREATE TABLE sniff_decisions_v7 (
    match_id        VARCHAR  NOT NULL,
    round           SMALLINT NOT NULL,
    seats           TINYINT  NOT NULL,
    seat            TINYINT  NOT NULL,
    placement_index SMALLINT NOT NULL,
    "double"        TINYINT  NOT NULL,
    outcome         VARCHAR  NOT NULL CHECK (outcome IN (
                        'played', 'held_self', 'held_partner', 'held_other', 'held_never')),
    mover_is_leader BOOLEAN  NOT NULL,
    value           DOUBLE   NOT NULL,
    same_outcome_before SMALLINT NOT NULL,
    same_outcome_after  SMALLINT NOT NULL
);
INSERT INTO sniff_decisions_v7 SELECT * FROM sniff_decisions;
DROP TABLE sniff_decisions;
ALTER TABLE sniff_decisions_v7 RENAME TO sniff_decisions;

UPDATE schema_version SET version = 7;
