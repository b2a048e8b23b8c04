-- Reading the facts the event log stores (analysis/stats/load.py): one statement per
-- facts table, named after it. Only finished matches have facts.

-- name: match_facts
SELECT * FROM match_facts;

-- name: round_facts
SELECT * FROM round_facts;

-- name: sniff_decisions
SELECT * FROM sniff_decisions;
