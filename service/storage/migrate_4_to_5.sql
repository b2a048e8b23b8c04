-- Schema version 4 to 5, in the one transaction that opens the file.
--
-- Version 5 adds the tree of finished matches (docs/evidence.md; the same tables as
-- schema.sql). Every finished match already in the file gets its leaf here, in the
-- order its match_ended event was logged (logged_at, then its place in the file): the
-- order the log took them. Nothing is signed here: a service that holds a signing key
-- signs the checkpoints and a tree head it finds missing when it opens the file
-- (service/storage/tree.py).

CREATE TABLE IF NOT EXISTS tree_leaves (
    leaf_index BIGINT  PRIMARY KEY,
    match_id   VARCHAR NOT NULL UNIQUE,
    seq        BIGINT  NOT NULL,
    head       VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS tree_heads (
    tree_size    BIGINT  NOT NULL,
    root_hash    VARCHAR NOT NULL,
    timestamp_ms BIGINT  NOT NULL,
    log_id       VARCHAR NOT NULL,
    signature    VARCHAR NOT NULL,
    PRIMARY KEY (log_id, tree_size)
);

CREATE TABLE IF NOT EXISTS checkpoints (
    match_id  VARCHAR NOT NULL,
    seq       BIGINT  NOT NULL,
    head      VARCHAR NOT NULL,
    log_id    VARCHAR NOT NULL,
    signature VARCHAR NOT NULL,
    PRIMARY KEY (log_id, match_id, seq)
);

-- A match's first match_ended event only (a second one, never written by the service,
-- is the audit's to report), and only a chained one (every event is, from version 3).
INSERT INTO tree_leaves (leaf_index, match_id, seq, head)
SELECT row_number() OVER (ORDER BY logged_at, position) - 1, match_id, seq, lower(hex(hash))
FROM (
    SELECT match_id, seq, hash, logged_at, rowid AS position
    FROM events_all
    WHERE kind = 'match_ended' AND hash IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY match_id ORDER BY seq) = 1
);

UPDATE schema_version SET version = 5;
