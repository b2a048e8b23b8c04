-- The performance figures of `sniff stats players` (analysis/stats/players.py), over the
-- views `decisions` of the analyses `sniff analyze` stored (analysis/rollout/store.py).

-- name: settings
-- The sets of settings stored (those of $1 rollouts and $2 seed, when given), most
-- decisions first: one set is summed.
SELECT rollouts, policy, seed, coalesce(rollouts_only, false) AS rollouts_only,
       count(*) AS decisions
FROM decisions
WHERE ($1::INTEGER IS NULL OR rollouts = $1) AND ($2::UBIGINT IS NULL OR seed = $2)
GROUP BY ALL
ORDER BY decisions DESC, rollouts, policy, seed, rollouts_only;

-- name: per_match
-- Per player, phase and match: decisions, equity lost, errors, best moves played, exact
-- decisions; of one set of settings ($1 to $4), of the matches $5 (ids joined by chr(31))
-- when given.
SELECT player, coalesce(phase, 'unknown') AS phase, match_id, count(*) AS n,
       sum(loss) AS lost, sum(error::INTEGER) AS errors, sum((loss = 0)::INTEGER) AS best,
       sum(coalesce(exact, false)::INTEGER) AS exact
FROM decisions
WHERE rollouts = $1 AND policy = $2 AND seed = $3 AND coalesce(rollouts_only, false) = $4
  AND ($5::VARCHAR IS NULL OR list_contains(string_split($5, chr(31)), match_id))
GROUP BY ALL
ORDER BY ALL;
