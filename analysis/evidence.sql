-- Named statements of analysis/evidence.py: what `sniff audit --public-key` reads of the
-- log besides the tree itself (service/storage/tree.py reads that).

-- name: checkpoints
-- Every stored checkpoint, with the hash the log holds for its event (NULL: no such event).
SELECT c.match_id, c.seq, c.head, c.log_id, c.signature, lower(hex(e.hash)) AS logged
FROM checkpoints AS c
LEFT JOIN events_all AS e ON e.match_id = c.match_id AND e.seq = c.seq
ORDER BY c.match_id, c.seq, c.log_id;

-- name: unsigned_heads
-- How many heads (round and match ends) have no checkpoint of log $1.
SELECT count(*) AS n
FROM events_all AS e
WHERE e.kind IN ('round_ended', 'match_ended')
  AND NOT EXISTS (
      SELECT 1 FROM checkpoints AS c
      WHERE c.log_id = $1 AND c.match_id = e.match_id AND c.seq = e.seq);

-- name: match_ends
-- Every finished match's end: the first match_ended event of each match, which its leaf
-- must name.
SELECT match_id, seq, lower(hex(hash)) AS head
FROM events_all
WHERE kind = 'match_ended'
QUALIFY row_number() OVER (PARTITION BY match_id ORDER BY seq) = 1
ORDER BY match_id;

-- name: event_hashes
-- The hash of each event of match $1, by seq.
SELECT seq, lower(hex(hash)) AS head FROM events_all WHERE match_id = $1 ORDER BY seq;
