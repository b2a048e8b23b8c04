-- Reading back what `sniff analyze` stored (analysis/rollout/store.py), over the views
-- `decisions` and `moves` of `store.query_analyses`.

-- name: match_decisions
-- Every stored decision of match $1 under the set of settings that holds most of its
-- decisions (ties: fewest rollouts first, then policy, seed, exact before rollouts only).
WITH chosen AS (
    SELECT rollouts, policy, seed, coalesce(rollouts_only, false) AS rollouts_only
    FROM decisions
    WHERE match_id = $1
    GROUP BY ALL
    ORDER BY count(*) DESC, rollouts, policy, seed, rollouts_only
    LIMIT 1
)
SELECT d.round, d.action, d.best, d.best_equity, d.played, d.played_equity, d.loss,
       d.loss_se, d.error, d.large, coalesce(d.exact, false) AS exact,
       coalesce(d.phase, '') AS phase, d.rollouts, d.policy, d.seed
FROM decisions AS d, chosen AS c
WHERE d.match_id = $1 AND d.rollouts = c.rollouts AND d.policy = c.policy
  AND d.seed = c.seed AND coalesce(d.rollouts_only, false) = c.rollouts_only
ORDER BY d.round, d.action;

-- name: match_luck
-- The luck of every chance event of match $1 stored under the settings that hold most of
-- its events (ties: fewest rollouts first, then policy, seed).
WITH chosen AS (
    SELECT rollouts, policy, seed
    FROM luck
    WHERE match_id = $1
    GROUP BY ALL
    ORDER BY count(*) DESC, rollouts, policy, seed
    LIMIT 1
)
SELECT l.round, l.action, l.seat, l.kind, l.tile, l.luck, l.se, l.rollouts
FROM luck AS l, chosen AS c
WHERE l.match_id = $1 AND l.rollouts = c.rollouts AND l.policy = c.policy AND l.seed = c.seed
ORDER BY l.round, l.action, l.seat, l.kind;
