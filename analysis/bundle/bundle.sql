-- Reads of `sniff export --evidence` (analysis/bundle/from_log.py). Each starts with "-- name: NAME".
-- The tables are the log's evidence (docs/evidence.md): tree_leaves (one
-- row a finished match, leaf_index from 0 in the order the matches ended),
-- tree_heads (each signed tree head), checkpoints (each signed head of a
-- round or match end). Hashes, ids and signatures may be stored as BLOBs or
-- as hex text: the reader takes either.

-- name: has_tables
SELECT count(*) FROM duckdb_tables()
WHERE schema_name = 'main' AND table_name IN ('tree_leaves', 'tree_heads', 'checkpoints');

-- name: tree_heads
SELECT tree_size, root_hash, timestamp_ms, log_id, signature
FROM tree_heads
ORDER BY tree_size, timestamp_ms;

-- name: leaves
-- The leaves of the tree of $1 leaves, leaf 0 first.
SELECT leaf_index, match_id, seq, head
FROM tree_leaves
WHERE leaf_index < $1
ORDER BY leaf_index;

-- name: finished
SELECT match_id FROM match_results_all;

-- name: checkpoints
-- Every checkpoint of a round end or a match end, by match and seq.
SELECT c.match_id, c.seq, c.head, c.log_id, c.signature
FROM checkpoints AS c
JOIN events_all AS e ON e.match_id = c.match_id AND e.seq = c.seq
WHERE e.kind IN ('round_ended', 'match_ended')
ORDER BY c.match_id, c.seq;
