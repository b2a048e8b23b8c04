-- American Sniff event log: the tables of a new file, at schema version 7.
--
-- Run once, when a log file is created. An existing file is brought to this
-- version by the migration steps (migrate_N_to_M.sql, listed in migrate.py)
-- instead, and views.sql is run after either. Table names ending in _all
-- hold the secrets of matches in play (seeds, hands, boneyards, drawn
-- tiles): only the service itself and a reader who names them explicitly
-- read them. docs/schema.md describes every table and view. The facts
-- tables (facts.sql) are created right after this script.

CREATE TABLE schema_version (
    version INTEGER NOT NULL
);

INSERT INTO schema_version (version) VALUES (7);

-- Append-only: one row per thing that happened to a match, in order.
CREATE TABLE events_all (
    match_id     VARCHAR     NOT NULL,
    seq          INTEGER     NOT NULL CHECK (seq >= 0),   -- 0, 1, 2, ... per match, no gaps
    kind         VARCHAR     NOT NULL CHECK (kind IN (
                     'match_created', 'round_dealt', 'action', 'round_ended', 'match_ended')),
    round        INTEGER,            -- 0-based; NULL for match-level events
    action_index INTEGER,            -- 0-based within its round (the lead is 0)
    seat         INTEGER,            -- actor; leader for a deal, finisher, winner
    move         VARCHAR,            -- docs/records.md notation: '1-1@1-4:low', 'draw', 'pass'
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
    players       VARCHAR[],          -- who played each seat (docs/records.md `players`)
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
    ended_by      VARCHAR             -- target | round_limit | forfeit
);


-- The tree of finished matches (docs/evidence.md): one leaf per finished match, numbered
-- in the order the log took their match_ended events, the signed roots of its prefixes,
-- and the signed checkpoints of the heads handed out. The same tables as
-- migrate_4_to_5.sql.
CREATE TABLE tree_leaves (
    leaf_index BIGINT  PRIMARY KEY,         -- 0, 1, 2, ... no gaps
    match_id   VARCHAR NOT NULL UNIQUE,
    seq        BIGINT  NOT NULL,            -- of the match's match_ended event
    head       VARCHAR NOT NULL             -- that event's hash, 64 lowercase hex digits
);

-- Signed tree heads: the root of the first tree_size leaves, signed at timestamp_ms.
CREATE TABLE tree_heads (
    tree_size    BIGINT  NOT NULL,
    root_hash    VARCHAR NOT NULL,          -- 64 lowercase hex digits
    timestamp_ms BIGINT  NOT NULL,          -- milliseconds since 1970-01-01T00:00:00Z
    log_id       VARCHAR NOT NULL,          -- SHA-256 of the signing public key
    signature    VARCHAR NOT NULL,          -- Ed25519, 128 lowercase hex digits
    PRIMARY KEY (log_id, tree_size)
);

-- Signed checkpoints: one per round_ended and match_ended event (the heads handed out).
CREATE TABLE checkpoints (
    match_id  VARCHAR NOT NULL,
    seq       BIGINT  NOT NULL,
    head      VARCHAR NOT NULL,             -- the hash of event seq, 64 lowercase hex digits
    log_id    VARCHAR NOT NULL,
    signature VARCHAR NOT NULL,             -- Ed25519, 128 lowercase hex digits
    PRIMARY KEY (log_id, match_id, seq)
);

-- The runs of `sniff simulate` (docs/simulate.md): what decides a run's matches and the
-- version of the code that plays them (`sim_version`: rules, dealing, bots; a match is
-- regenerated only by code of the same version). `stored`: 'facts' (its matches have
-- settings, results and facts rows, no events: regenerated from their seeds on demand)
-- or 'events' (every event stored and chained, `--events`). The same table as
-- migrate_5_to_6.sql.
CREATE TABLE simulation_runs (
    run_id          VARCHAR   PRIMARY KEY,
    matches         BIGINT    NOT NULL,
    seats           TINYINT   NOT NULL,
    bots            VARCHAR[] NOT NULL,       -- as given: seat s plays bots[s % len(bots)]
    players         VARCHAR[] NOT NULL,       -- the bot of each seat
    seed            HUGEINT   NOT NULL,       -- match i is seeded seed + i
    variant         VARCHAR   NOT NULL,
    target          INTEGER   NOT NULL,
    round_limit     INTEGER,
    stored          VARCHAR   NOT NULL CHECK (stored IN ('facts', 'events')),
    sim_version     VARCHAR   NOT NULL,       -- sniff.simulated.SIM_VERSION of the code that played it
    code_version    VARCHAR   NOT NULL,       -- the package (and git commit) that played it
    created_at      TIMESTAMPTZ NOT NULL
);
