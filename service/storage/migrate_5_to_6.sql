-- Schema version 5 to 6, in the one transaction that opens the file.
--
-- Version 6 adds simulation_runs (the same table as schema.sql): one row per run of
-- `sniff simulate`, with what decides its matches and the version of the code that can
-- play them again. A run stored as facts (`stored = 'facts'`, the default of
-- `sniff simulate`) has, per match, rows in match_settings_all, match_results_all and the
-- facts tables but no events: its events are regenerated from the seed on demand
-- (docs/simulate.md). Nothing older changes.

CREATE TABLE IF NOT EXISTS simulation_runs (
    run_id          VARCHAR   PRIMARY KEY,
    matches         BIGINT    NOT NULL,
    seats           TINYINT   NOT NULL,
    bots            VARCHAR[] NOT NULL,
    players         VARCHAR[] NOT NULL,
    seed            HUGEINT   NOT NULL,
    variant         VARCHAR   NOT NULL,
    target          INTEGER   NOT NULL,
    round_limit     INTEGER,
    stored          VARCHAR   NOT NULL CHECK (stored IN ('facts', 'events')),
    sim_version     VARCHAR   NOT NULL,
    code_version    VARCHAR   NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

UPDATE schema_version SET version = 6;
