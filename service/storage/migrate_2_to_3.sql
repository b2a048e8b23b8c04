-- Schema version 2 to 3, in the one transaction that opens the file.
--
-- Version 3 makes the log auditable and fast to list: every event gets the
-- column `hash`, its link in its match's hash chain (docs/chain.md; the
-- events already in the file are chained by migrate.py right after this
-- script, without a secret, and each match records how many events were so
-- chained); each match's settings gain typed columns (variant, round limit,
-- players, source, ...) filled from its match_created detail; finished
-- matches get a typed result row; and an index on events_all (match_id)
-- finds one match's events without a scan. TRY_CAST: a value of an old row
-- that a column cannot hold becomes NULL instead of failing the migration.

ALTER TABLE events_all ADD COLUMN hash BLOB;

ALTER TABLE match_settings_all ADD COLUMN variant VARCHAR NOT NULL DEFAULT 'american';
ALTER TABLE match_settings_all ADD COLUMN round_limit INTEGER;
ALTER TABLE match_settings_all ADD COLUMN players VARCHAR[];
ALTER TABLE match_settings_all ADD COLUMN source VARCHAR NOT NULL DEFAULT 'served';
ALTER TABLE match_settings_all ADD COLUMN run_id VARCHAR;
ALTER TABLE match_settings_all ADD COLUMN explicit_deals BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE match_settings_all ADD COLUMN seed_commitment VARCHAR;
ALTER TABLE match_settings_all ADD COLUMN chained_at_migration INTEGER;
ALTER TABLE match_settings_all ADD COLUMN detail JSON;

UPDATE match_settings_all AS s
SET
    variant = coalesce(e.detail ->> '$.variant', 'american'),
    round_limit = TRY_CAST(e.detail ->> '$.round_limit' AS INTEGER),
    players = TRY_CAST(e.detail -> '$.players' AS VARCHAR[]),
    source = CASE
        WHEN e.detail ->> '$.source' IN ('served', 'imported', 'simulated')
            THEN e.detail ->> '$.source'
        ELSE 'served'
    END,
    run_id = e.detail ->> '$.run_id',
    detail = e.detail
FROM events_all AS e
WHERE e.match_id = s.match_id AND e.seq = 0 AND e.kind = 'match_created';

UPDATE match_settings_all
SET explicit_deals = true
WHERE match_id IN (
    SELECT match_id
    FROM events_all
    WHERE kind = 'round_dealt' AND detail ->> '$.dealt_by' = 'request'
);

CREATE TABLE match_results_all (
    match_id      VARCHAR     PRIMARY KEY,
    finished_at   TIMESTAMPTZ NOT NULL,
    winner        INTEGER,
    scores        INTEGER[],
    rounds        INTEGER,
    ended_by      VARCHAR
);

-- A match that ended with a round end in its last round ended at its round
-- limit; one won on a placement has no end of its last round (docs/rules.md §8).
INSERT OR IGNORE INTO match_results_all (match_id, finished_at, winner, scores, rounds, ended_by)
SELECT
    e.match_id,
    e.logged_at,
    TRY_CAST(e.detail ->> '$.winner' AS INTEGER),
    TRY_CAST(e.detail -> '$.scores' AS INTEGER[]),
    CAST(d.rounds AS INTEGER),
    CASE WHEN r.match_id IS NOT NULL THEN 'round_limit' ELSE 'target' END
FROM events_all AS e
LEFT JOIN (
    SELECT match_id, count(*) AS rounds, max(round) AS last_round
    FROM events_all
    WHERE kind = 'round_dealt'
    GROUP BY match_id
) AS d ON d.match_id = e.match_id
LEFT JOIN (
    SELECT DISTINCT match_id, round
    FROM events_all
    WHERE kind = 'round_ended'
) AS r ON r.match_id = e.match_id AND r.round = d.last_round
WHERE e.kind = 'match_ended';

CREATE INDEX events_all_match_id ON events_all (match_id);

UPDATE schema_version SET version = 3;
