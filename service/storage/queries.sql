-- Named statements of the event log. Each starts with "-- name: NAME" and
-- runs the text up to the next name. Values are always bound ($name), never
-- pasted in; `_pending_events` and `_pending_settings` are the Arrow tables
-- the writer registers. The service's own reads name the tables (`*_all`):
-- it must see every secret to rebuild its matches.
-- Events are read with logged_at as epoch microseconds: converting those in
-- Python is several times faster than DuckDB's TIMESTAMPTZ to datetime.

-- name: schema_version_table_exists
SELECT count(*) > 0
FROM duckdb_tables()
WHERE database_name = current_database()
  AND schema_name = 'main'
  AND table_name = 'schema_version';

-- name: user_table_count
SELECT count(*)
FROM duckdb_tables()
WHERE database_name = current_database() AND NOT internal;

-- name: schema_version
SELECT max(version) FROM schema_version;

-- name: insert_pending_settings
INSERT INTO match_settings_all (
    match_id, seats, target, seed, rules_version, created_at, variant, round_limit,
    players, source, run_id, explicit_deals, seed_commitment, detail
)
SELECT
    match_id, seats, target, CAST(seed AS HUGEINT), rules_version, created_at, variant,
    round_limit, players, source, run_id, explicit_deals, seed_commitment,
    CAST(detail AS JSON)
FROM _pending_settings;

-- name: insert_pending_results
-- A second match_ended event of one match (never written by the service) is
-- left out rather than failing the whole load; the audit reports it.
INSERT OR IGNORE INTO match_results_all (match_id, finished_at, winner, scores, rounds, ended_by)
SELECT match_id, finished_at, winner, scores, rounds, ended_by
FROM _pending_results;

-- name: mark_explicit_deals
-- Matches that a load deals a round to explicitly: their deals are not all
-- made from the seed, so the commitment does not cover them all.
UPDATE match_settings_all
SET explicit_deals = true
WHERE list_contains($match_ids, match_id) AND NOT explicit_deals;

-- name: insert_pending_events
INSERT INTO events_all (
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, detail, hash, logged_at
)
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS JSON), hash, logged_at
FROM _pending_events;

-- name: next_seq_of_unfinished
-- The writer's starting point: where each open match's sequence goes on.
SELECT match_id, max(seq) + 1 AS next_seq
FROM events_all
GROUP BY match_id
HAVING count(*) FILTER (WHERE kind = 'match_ended') = 0;

-- name: next_seq_of
-- For a match the writer does not keep in memory (a finished one).
SELECT max(seq) + 1 AS next_seq
FROM events_all
WHERE match_id = $match_id;

-- name: events_for
-- One filter, match_id = $match_id, so that DuckDB answers it from the
-- index on events_all (match_id).
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR), hash, epoch_us(logged_at)
FROM events_all
WHERE match_id = $match_id
ORDER BY seq;

-- name: events_by_match
-- One ordered pass over every match (or the unfinished ones), for start-up.
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR), hash, epoch_us(logged_at)
FROM events_all
WHERE NOT $unfinished_only
   OR match_id NOT IN (SELECT match_id FROM events_all WHERE kind = 'match_ended')
ORDER BY match_id, seq;

-- name: match_ids
-- In the order the matches began; unfinished = no match_ended event yet.
SELECT match_id
FROM events_all
GROUP BY match_id
HAVING NOT $unfinished_only OR count(*) FILTER (WHERE kind = 'match_ended') = 0
ORDER BY min(logged_at), match_id;

-- name: count
SELECT count(*) FROM events_all;

-- name: next_seq_of_all
-- Where every match's sequence goes on: for loading a journal after a crash.
SELECT match_id, max(seq) + 1 AS next_seq
FROM events_all
GROUP BY match_id;

-- name: overlay_journal
-- An offline reader's view of rows a journal holds and the file lacks,
-- without writing the file: temporary views named like the tables shadow
-- them (DuckDB looks in `temp` first, also when binding the file's views).
-- {log} is the file's catalog, quoted: the only name this package pastes.
CREATE TEMP VIEW events_all AS
SELECT * FROM {log}.main.events_all
UNION ALL
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS JSON), logged_at, hash
FROM _journal_events;
CREATE TEMP VIEW match_settings_all AS
SELECT
    * REPLACE (
        explicit_deals OR match_id IN (SELECT match_id FROM _journal_explicit) AS explicit_deals
    )
FROM {log}.main.match_settings_all
UNION ALL
SELECT
    match_id, seats, target, CAST(seed AS HUGEINT), rules_version, created_at, variant,
    round_limit, players, source, run_id,
    explicit_deals OR match_id IN (SELECT match_id FROM _journal_explicit), seed_commitment,
    CAST(NULL AS INTEGER), CAST(detail AS JSON)
FROM _journal_settings;
CREATE TEMP VIEW match_results_all AS
SELECT * FROM {log}.main.match_results_all
UNION ALL
SELECT match_id, finished_at, winner, scores, rounds, ended_by
FROM _journal_results
WHERE match_id NOT IN (SELECT match_id FROM {log}.main.match_results_all);

-- name: current_database
SELECT current_database();

-- name: unchained_matches
-- The matches the migration to version 3 chains (migrate.py): those with
-- events that have no hash, which is every event of an older file.
SELECT DISTINCT match_id FROM events_all WHERE hash IS NULL ORDER BY match_id;

-- name: unchained_events
-- Their events, each match in seq order, a chunk of matches at a time.
SELECT
    match_id, seq, kind, round, action_index, seat, move, drawn,
    points, ends_sum, CAST(detail AS VARCHAR)
FROM events_all
WHERE list_contains($match_ids, match_id)
ORDER BY match_id, seq;

-- name: set_legacy_hashes
UPDATE events_all AS e
SET hash = h.hash
FROM _legacy_hashes AS h
WHERE e.match_id = h.match_id AND e.seq = h.seq;

-- name: set_chained_at_migration
UPDATE match_settings_all AS s
SET chained_at_migration = c.chained
FROM _chained_at_migration AS c
WHERE s.match_id = c.match_id;

-- name: last_hashes
-- The last hash of each of the given matches (a journal's rows chained on).
SELECT match_id, seq, hash
FROM events_all
WHERE list_contains($match_ids, match_id)
QUALIFY row_number() OVER (PARTITION BY match_id ORDER BY seq DESC) = 1;

-- name: known_matches
-- Which of the given match ids the log already holds (an import leaves them out).
SELECT DISTINCT match_id FROM match_settings_all WHERE list_contains($match_ids, match_id)
UNION
SELECT DISTINCT match_id FROM events_all WHERE list_contains($match_ids, match_id);

-- name: finished_without_facts
-- The finished matches whose facts are not stored yet (service/storage/facts.py): every
-- finished match of a file migrated to version 4, or one whose end was loaded from the
-- journal at open.
SELECT DISTINCT match_id FROM events_all
WHERE kind = 'match_ended'
  AND match_id NOT IN (SELECT match_id FROM match_facts)
ORDER BY match_id;

-- name: replay_events
-- The events that rebuild the given matches, each in seq order (replayer.RowEvent's fields).
SELECT match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum,
       CAST(detail AS VARCHAR) AS detail
FROM events_all
WHERE list_contains($match_ids, match_id)
  AND kind IN ('match_created', 'round_dealt', 'action')
ORDER BY match_id, seq;

-- name: insert_salvage
-- One salvaged journal (salvage.sql): where it went, where it was damaged, what was loaded.
INSERT INTO salvages (journal, damaged_at, loaded, unloadable, match_ids)
VALUES ($journal, $damaged_at, $loaded, $unloadable, $match_ids);

-- name: database_blocks_used
-- The open file's block size and how many of its blocks are in use (integrity.py).
SELECT block_size, used_blocks
FROM pragma_database_size()
WHERE database_name = current_database();

-- name: log_tables
-- Every table of the open file, qualified, whose blocks integrity.py looks for.
SELECT schema_name || '.' || table_name
FROM duckdb_tables()
WHERE database_name = current_database()
ORDER BY 1;

-- name: highest_metadata_block
-- The highest block that holds the open file's metadata (integrity.py).
SELECT max(block_id)
FROM pragma_metadata_info();

-- name: highest_table_block
-- The highest block on disk that holds a column segment of one table (integrity.py).
SELECT max(greatest(block_id, coalesce(list_max(additional_block_ids), -1)))
FROM pragma_storage_info(?)
WHERE persistent;

-- name: insert_pending_leaves
-- The leaves of the matches a load ends (service/storage/tree.py), numbered on from the
-- tree's last leaf in the order given (`ord`): the order the log takes the match ends.
-- A match that has a leaf already (a second match_ended event, never written by the
-- service: the audit reports it) gets no second one.
INSERT INTO tree_leaves (leaf_index, match_id, seq, head)
SELECT (SELECT coalesce(max(leaf_index) + 1, 0) FROM tree_leaves)
           + row_number() OVER (ORDER BY ord) - 1,
       match_id, seq, head
FROM (
    SELECT p.ord, p.match_id, p.seq, p.head
    FROM _pending_leaves AS p
    WHERE NOT EXISTS (SELECT 1 FROM tree_leaves AS t WHERE t.match_id = p.match_id)
    QUALIFY row_number() OVER (PARTITION BY p.match_id ORDER BY p.ord) = 1
);

-- name: insert_pending_checkpoints
-- Checkpoints signed for heads (service/storage/tree.py); signing a head again gives the
-- same checkpoint, so one already stored is kept.
INSERT OR IGNORE INTO checkpoints (match_id, seq, head, log_id, signature)
SELECT match_id, seq, head, log_id, signature FROM _pending_checkpoints;

-- name: heads_without_checkpoint
-- Every head (round or match end) without a checkpoint of log $log_id: what a service
-- holding that key signs when it opens the file.
SELECT e.match_id, e.seq, lower(hex(e.hash)) AS head
FROM events_all AS e
WHERE e.kind IN ('round_ended', 'match_ended') AND e.hash IS NOT NULL
  AND NOT EXISTS (
      SELECT 1 FROM checkpoints AS c
      WHERE c.log_id = $log_id AND c.match_id = e.match_id AND c.seq = e.seq)
ORDER BY e.match_id, e.seq;

-- name: tree_size_signed
-- The largest tree a head of log $log_id signs (NULL: none yet).
SELECT max(tree_size) FROM tree_heads WHERE log_id = $log_id;

-- name: last_tree_head_ms
-- The time of the latest head of log $log_id: a new one is never earlier.
SELECT max(timestamp_ms) FROM tree_heads WHERE log_id = $log_id;

-- name: leaves_from
-- The leaves from index $start on, in order (the tree signer adds them to its range).
SELECT leaf_index, match_id, seq, head FROM tree_leaves
WHERE leaf_index >= $start
ORDER BY leaf_index;

-- name: insert_tree_head
INSERT INTO tree_heads (tree_size, root_hash, timestamp_ms, log_id, signature)
VALUES ($tree_size, $root_hash, $timestamp_ms, $log_id, $signature);

-- name: tree_leaves_all
-- The tree's leaves in order (proofs, the audit).
SELECT leaf_index, match_id, seq, head FROM tree_leaves ORDER BY leaf_index;

-- name: tree_heads_all
-- Every signed tree head, smallest tree first, then oldest.
SELECT tree_size, root_hash, timestamp_ms, log_id, signature
FROM tree_heads
ORDER BY tree_size, timestamp_ms;

-- -- simulated matches stored as facts (service/storage/simulated.py) ----------------

-- name: insert_simulation_run
-- A run of `sniff simulate` (its first chunk's transaction; again on a resume: no change).
INSERT OR IGNORE INTO simulation_runs
    (run_id, matches, seats, bots, players, seed, variant, target, round_limit, stored,
     sim_version, code_version, created_at)
VALUES ($run_id, $matches, $seats, $bots, $players, $seed, $variant, $target, $round_limit,
        $stored, $sim_version, $code_version, now());

-- name: simulation_run
SELECT run_id, matches, seats, bots, players, CAST(seed AS VARCHAR) AS seed, variant, target,
       round_limit, stored, sim_version, code_version
FROM simulation_runs
WHERE run_id = $1;

-- name: insert_simulated_settings
-- A chunk's matches (_sim_matches: simfacts.SimTables.matches) with the settings of their run.
INSERT INTO match_settings_all
    (match_id, seats, target, seed, rules_version, created_at, variant, round_limit, players,
     source, run_id, explicit_deals, detail)
SELECT m.match_id, r.seats, r.target, m.seed, $rules_version, now(), r.variant, r.round_limit,
       r.players, 'simulated', r.run_id, false, NULL
FROM _sim_matches AS m, simulation_runs AS r
WHERE r.run_id = $run_id;

-- name: insert_simulated_results
INSERT INTO match_results_all (match_id, finished_at, winner, scores, rounds, ended_by)
SELECT match_id, now(), winner, scores, rounds,
       CASE WHEN ended = 1 THEN 'round_limit' ELSE 'target' END
FROM _sim_matches;

-- name: insert_simulated_match_facts
INSERT INTO match_facts
SELECT m.match_id, 'simulated', r.run_id, r.seats, r.variant, r.players, r.target,
       r.round_limit, true, m.winner, m.first_leader, m.scores, m.rounds, m.incomplete_rounds
FROM _sim_matches AS m, simulation_runs AS r
WHERE r.run_id = $run_id;

-- name: insert_simulated_round_facts
INSERT INTO round_facts
SELECT f.match_id, f.round, r.seats, r.variant, f.complete, f.leader, f.sniff, f.maker,
       f.sniff_index, f."double", f.orientation, f.covered_after, f.net, f.value,
       f.sniff_points, f.sniff_points_maker_side, f.sniff_points_others, f.ending,
       f.finisher, f.points, f.deductions, f.placements, f.scoring_placements
FROM _sim_rounds AS f, simulation_runs AS r
WHERE r.run_id = $run_id;

-- name: insert_simulated_decisions
INSERT INTO sniff_decisions
SELECT f.match_id, f.round, r.seats, f.seat, f.placement_index, f."double", f.outcome,
       f.mover_is_leader, f.value, f.same_outcome_before, f.same_outcome_after
FROM _sim_decisions AS f, simulation_runs AS r
WHERE r.run_id = $run_id;

-- name: facts_only_matches_of
-- Which of the named matches ($1: ids joined by chr(31)) are stored as facts only.
SELECT s.match_id
FROM match_settings_all AS s
JOIN simulation_runs AS r ON r.run_id = s.run_id AND r.stored = 'facts'
WHERE list_contains(string_split($1, chr(31)), s.match_id);
