-- Schema version 1 to 2, in the one transaction that opens the file.
--
-- Version 1 had one table, `events`, which every reader saw whole, and views
-- that cast JSON settings when read (one bad target broke `matches` for
-- everyone). Version 2 renames the table to `events_all` (the name `events`
-- becomes a view that hides the secrets of matches in play) and keeps each
-- match's settings in typed columns. TRY_CAST: a value of an old row that a
-- column cannot hold becomes NULL instead of failing the migration.

-- The old views read `events` by name; views.sql recreates them all.
DROP VIEW IF EXISTS matches;
DROP VIEW IF EXISTS deals;
DROP VIEW IF EXISTS actions;
DROP VIEW IF EXISTS round_ends;
DROP VIEW IF EXISTS match_ends;

ALTER TABLE events RENAME TO events_all;

CREATE TABLE match_settings_all (
    match_id      VARCHAR     PRIMARY KEY,
    seats         SMALLINT,
    target        INTEGER,
    seed          HUGEINT,
    rules_version VARCHAR,
    created_at    TIMESTAMPTZ NOT NULL
);

INSERT INTO match_settings_all (match_id, seats, target, seed, rules_version, created_at)
SELECT
    match_id,
    TRY_CAST(detail ->> '$.seats' AS SMALLINT),
    TRY_CAST(detail ->> '$.target' AS INTEGER),
    TRY_CAST(detail ->> '$.seed' AS HUGEINT),
    detail ->> '$.rules_version',
    logged_at
FROM events_all
WHERE kind = 'match_created' AND seq = 0;

UPDATE schema_version SET version = 2;
