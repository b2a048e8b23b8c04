-- Reading the event log to replay its matches (analysis/stats/load.py).

-- name: finished_match_events
-- Every event that rebuilds a finished match, in order. Unfinished matches are left out:
-- their hands are still secret, and their facts are not final.
SELECT match_id, kind, move, CAST(detail AS VARCHAR) AS detail
FROM events
WHERE kind IN ('match_created', 'round_dealt', 'action')
  AND match_id IN (SELECT match_id FROM events WHERE kind = 'match_ended')
ORDER BY match_id, seq;
