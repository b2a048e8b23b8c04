-- American Sniff event log: the tables of a new file, at schema version 2.
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

INSERT INTO schema_version (version) VALUES (2);

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
    PRIMARY KEY (match_id, seq)
);

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
    created_at    TIMESTAMPTZ NOT NULL
);
