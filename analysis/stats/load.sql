-- Reading the facts the event log stores (analysis/stats/load.py): one statement per
-- facts table, named after it. Only finished matches have facts.

-- name: match_facts
SELECT * FROM match_facts;

-- name: round_facts
SELECT * FROM round_facts;

-- name: sniff_decisions
SELECT * FROM sniff_decisions;

-- The counterfactual Sniff timing replays the matches themselves (it needs their positions).
-- name: finished_match_events
-- Every event that rebuilds a finished match, in order. Unfinished matches are left out:
-- their hands are still secret, and their facts are not final.
SELECT match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum,
       CAST(detail AS VARCHAR) AS detail
FROM events
WHERE kind IN ('match_created', 'round_dealt', 'action')
  AND match_id IN (SELECT match_id FROM events WHERE kind = 'match_ended')
ORDER BY match_id, seq;
