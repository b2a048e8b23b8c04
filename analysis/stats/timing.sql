-- The Sniff-timing statistics of STATS.md §2-§4 as DuckDB aggregates over the facts tables
-- (facts.sql). Python only adds each cell's t quantile and bounds (timing.py).

-- name: macros
-- STATS.md, Words: the timing bucket of a placement index (NULL: no Sniff), and the value of
-- a round for a seat's side: its net minus the mean net of the other sides. `net` holds each
-- seat's side's net, so with 4 seats the two sides are half its sum.
CREATE OR REPLACE TEMP MACRO timing_bucket(t) AS
    CASE
        WHEN t IS NULL THEN 'none'
        WHEN t = 0 THEN 'lead'
        WHEN t = 1 THEN '1'
        WHEN t = 2 THEN '2'
        WHEN t <= 4 THEN '3-4'
        WHEN t <= 7 THEN '5-7'
        ELSE '8+'
    END;
CREATE OR REPLACE TEMP MACRO side_value(net, seats, seat) AS
    net[seat + 1]
    - ((CASE WHEN seats = 4 THEN list_sum(net) / 2 ELSE list_sum(net) END) - net[seat + 1])
      / (CASE WHEN seats = 3 THEN 2 ELSE 1 END);
-- STATS.md §4: a seat's bot, then the other seats' bots in turn order from that seat.
CREATE OR REPLACE TEMP MACRO matchup(players, seat) AS
    CASE WHEN players IS NOT NULL AND seat IS NOT NULL
         THEN array_to_string(list_concat(players[seat + 1:], players[:seat]), '|')
    END;

-- name: select_matches
-- The matches the filters keep, each numbered (mk) so a round has an integer id. `$bots` is
-- a list of names repeated over the seats, as `--bots` means when matches are played.
CREATE OR REPLACE TEMP TABLE sel AS
SELECT row_number() OVER () AS mk, match_id, seats, variant, players
FROM match_facts
WHERE ($seats IS NULL OR seats = $seats)
  AND ($variant IS NULL OR variant = $variant)
  AND ($sources IS NULL OR list_contains($sources, source))
  AND ($run IS NULL OR run = $run)
  AND ($bots IS NULL
       OR players = list_transform(range(seats), lambda i: $bots[i % len($bots) + 1]));

-- name: selection_counts
SELECT
    (SELECT count(*) FROM sel)                                       AS matches,
    count(*) FILTER (WHERE r.complete)                               AS complete_rounds,
    count(*) FILTER (WHERE NOT r.complete)                           AS incomplete_rounds
FROM round_facts AS r
SEMI JOIN sel USING (match_id);

-- name: rounds_facts
-- STATS.md §1: one row per complete round, its columns in order.
SELECT r.match_id, r.round, r.seats, r.variant, r.leader, r.sniff, r.maker, r.sniff_index,
       r."double", r.orientation, r.covered_after, r.net, r.sniff_points,
       r.sniff_points_maker_side, r.sniff_points_others
FROM round_facts AS r
JOIN sel USING (match_id)
WHERE r.complete
ORDER BY sel.mk, r.round;

-- name: timing_cells
-- STATS.md §2: per bucket, the value of each complete round for the maker's side (for
-- `none`, the leader's side). Rounds are first summed per combination of every factor's
-- level (a few hundred rows), then rolled up per factor, within each seat count and pooled.
-- Values are multiples of 1/2, so these sums are exact in doubles.
WITH obs AS (
    SELECT
        r.seats,
        s.variant,
        timing_bucket(r.sniff_index)                              AS bucket,
        r."double"                                                AS dbl,
        r.maker = r.leader                                        AS maker_is_leader,
        s.players[r.maker + 1]                                    AS maker_bot,
        matchup(s.players, r.maker)                               AS matchup,
        side_value(r.net, r.seats, coalesce(r.maker, r.leader))   AS value
    FROM round_facts AS r
    JOIN sel AS s USING (match_id)
    WHERE r.complete
),
fine AS (
    SELECT seats, variant, bucket, dbl, maker_is_leader, maker_bot, matchup,
           count(*) AS n, sum(value) AS sy, sum(value * value) AS syy
    FROM obs
    GROUP BY ALL
),
levels AS (
    SELECT seats, 'all' AS factor, 'all' AS level, bucket, n, sy, syy FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), bucket, n, sy, syy
    FROM fine WHERE bucket <> 'none'
    UNION ALL
    SELECT seats, 'maker_is_leader', CAST(maker_is_leader AS VARCHAR), bucket, n, sy, syy
    FROM fine WHERE bucket <> 'none'
    UNION ALL
    SELECT seats, 'maker_bot', maker_bot, bucket, n, sy, syy
    FROM fine WHERE bucket <> 'none' AND maker_bot IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, bucket, n, sy, syy
    FROM fine WHERE bucket <> 'none' AND matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'variant', variant, bucket, n, sy, syy FROM fine
)
SELECT
    CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END  AS seats,
    factor,
    level,
    bucket                                                                     AS cell,
    sum(n)                                                                     AS n,
    sum(n)                                                                     AS rounds,
    sum(sy) / sum(n)                                                           AS mean,
    -- s²/n, the variance of the mean over independent rounds
    CASE WHEN sum(n) >= 2
         THEN greatest(sum(syy) - sum(sy) * sum(sy) / sum(n), 0) / (sum(n) - 1) / sum(n)
    END                                                                        AS var_mean
FROM levels
GROUP BY GROUPING SETS ((seats, factor, level, bucket), (factor, level, bucket));

-- name: holding_cells
-- STATS.md §3: per outcome and per outcome × bucket, the value of the round for the
-- mover's side, with the variance of the mean clustered by round. For each decision i and
-- each way a cell can group decisions of one round together, k = how many decisions of its
-- round share its cell and S = the sum of their values (a self-join within the round).
-- Over a cell, with e_r the per-round sums of residuals y - m:
--   Σ e_r² = Σ_r s_r² - 2m Σ_r s_r n_r + m² Σ_r n_r² = Σ S²/k - 2m Σ S + m² Σ k,
--   G (rounds) = Σ 1/k,
-- all additive over rounds, so the per-combination sums roll up like §2's.
WITH rnd AS (
    SELECT r.match_id, r.round, s.mk * 65536 + r.round AS rid, r.seats, s.variant, s.players,
           r.net
    FROM round_facts AS r
    JOIN sel AS s USING (match_id)
    WHERE r.complete
),
dec AS (
    SELECT
        rnd.rid,
        d.placement_index                          AS idx,
        rnd.seats,
        rnd.variant,
        d.outcome,
        timing_bucket(d.placement_index)           AS bucket,
        d."double"                                 AS dbl,
        d.mover_is_leader,
        rnd.players[d.seat + 1]                    AS mover_bot,
        matchup(rnd.players, d.seat)               AS matchup,
        side_value(rnd.net, rnd.seats, d.seat)     AS value
    FROM sniff_decisions AS d
    JOIN rnd USING (match_id, round)
),
pairs AS (
    SELECT
        a.rid, a.idx, b.value AS v,
        a.outcome = b.outcome                                      AS o,
        a.bucket = b.bucket                                        AS bk,
        a.dbl = b.dbl                                              AS dd,
        a.mover_is_leader = b.mover_is_leader                      AS ml,
        a.mover_bot IS NOT DISTINCT FROM b.mover_bot               AS mb,
        a.matchup IS NOT DISTINCT FROM b.matchup                   AS mu
    FROM dec AS a
    JOIN dec AS b USING (rid)
),
within AS (
    SELECT
        rid, idx,
        count(*) FILTER (o)                 AS k_o,     sum(v) FILTER (o)                 AS s_o,
        count(*) FILTER (o AND bk)          AS k_ob,    sum(v) FILTER (o AND bk)          AS s_ob,
        count(*) FILTER (o AND dd)          AS k_od,    sum(v) FILTER (o AND dd)          AS s_od,
        count(*) FILTER (o AND bk AND dd)   AS k_obd,   sum(v) FILTER (o AND bk AND dd)   AS s_obd,
        count(*) FILTER (o AND ml)          AS k_ol,    sum(v) FILTER (o AND ml)          AS s_ol,
        count(*) FILTER (o AND bk AND ml)   AS k_obl,   sum(v) FILTER (o AND bk AND ml)   AS s_obl,
        count(*) FILTER (o AND mb)          AS k_om,    sum(v) FILTER (o AND mb)          AS s_om,
        count(*) FILTER (o AND bk AND mb)   AS k_obm,   sum(v) FILTER (o AND bk AND mb)   AS s_obm,
        count(*) FILTER (o AND mu)          AS k_ou,    sum(v) FILTER (o AND mu)          AS s_ou,
        count(*) FILTER (o AND bk AND mu)   AS k_obu,   sum(v) FILTER (o AND bk AND mu)   AS s_obu
    FROM pairs
    GROUP BY rid, idx
),
fine AS (
    SELECT
        dec.seats, dec.variant, dec.outcome, dec.bucket, dec.dbl, dec.mover_is_leader,
        dec.mover_bot, dec.matchup,
        count(*) AS n, sum(dec.value) AS sy,
        -- per relation: Σ S²/k, Σ S, Σ k, Σ 1/k
        sum(s_o * s_o / k_o) AS a_o, sum(s_o) AS b_o, sum(k_o) AS c_o, sum(1 / k_o) AS g_o,
        sum(s_ob * s_ob / k_ob) AS a_ob, sum(s_ob) AS b_ob, sum(k_ob) AS c_ob,
        sum(1 / k_ob) AS g_ob,
        sum(s_od * s_od / k_od) AS a_od, sum(s_od) AS b_od, sum(k_od) AS c_od,
        sum(1 / k_od) AS g_od,
        sum(s_obd * s_obd / k_obd) AS a_obd, sum(s_obd) AS b_obd, sum(k_obd) AS c_obd,
        sum(1 / k_obd) AS g_obd,
        sum(s_ol * s_ol / k_ol) AS a_ol, sum(s_ol) AS b_ol, sum(k_ol) AS c_ol,
        sum(1 / k_ol) AS g_ol,
        sum(s_obl * s_obl / k_obl) AS a_obl, sum(s_obl) AS b_obl, sum(k_obl) AS c_obl,
        sum(1 / k_obl) AS g_obl,
        sum(s_om * s_om / k_om) AS a_om, sum(s_om) AS b_om, sum(k_om) AS c_om,
        sum(1 / k_om) AS g_om,
        sum(s_obm * s_obm / k_obm) AS a_obm, sum(s_obm) AS b_obm, sum(k_obm) AS c_obm,
        sum(1 / k_obm) AS g_obm,
        sum(s_ou * s_ou / k_ou) AS a_ou, sum(s_ou) AS b_ou, sum(k_ou) AS c_ou,
        sum(1 / k_ou) AS g_ou,
        sum(s_obu * s_obu / k_obu) AS a_obu, sum(s_obu) AS b_obu, sum(k_obu) AS c_obu,
        sum(1 / k_obu) AS g_obu
    FROM dec
    JOIN within USING (rid, idx)
    GROUP BY ALL
),
levels AS (
    SELECT seats, 'all' AS factor, 'all' AS level, outcome AS cell, n, sy,
           a_o AS a, b_o AS b, c_o AS c, g_o AS g FROM fine
    UNION ALL
    SELECT seats, 'all', 'all', outcome || '/' || bucket, n, sy, a_ob, b_ob, c_ob, g_ob FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), outcome, n, sy, a_od, b_od, c_od, g_od
    FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), outcome || '/' || bucket, n, sy,
           a_obd, b_obd, c_obd, g_obd
    FROM fine
    UNION ALL
    SELECT seats, 'mover_is_leader', CAST(mover_is_leader AS VARCHAR), outcome, n, sy,
           a_ol, b_ol, c_ol, g_ol
    FROM fine
    UNION ALL
    SELECT seats, 'mover_is_leader', CAST(mover_is_leader AS VARCHAR), outcome || '/' || bucket,
           n, sy, a_obl, b_obl, c_obl, g_obl
    FROM fine
    UNION ALL
    SELECT seats, 'mover_bot', mover_bot, outcome, n, sy, a_om, b_om, c_om, g_om
    FROM fine WHERE mover_bot IS NOT NULL
    UNION ALL
    SELECT seats, 'mover_bot', mover_bot, outcome || '/' || bucket, n, sy,
           a_obm, b_obm, c_obm, g_obm
    FROM fine WHERE mover_bot IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, outcome, n, sy, a_ou, b_ou, c_ou, g_ou
    FROM fine WHERE matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, outcome || '/' || bucket, n, sy,
           a_obu, b_obu, c_obu, g_obu
    FROM fine WHERE matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'variant', variant, outcome, n, sy, a_o, b_o, c_o, g_o FROM fine
    UNION ALL
    SELECT seats, 'variant', variant, outcome || '/' || bucket, n, sy, a_ob, b_ob, c_ob, g_ob
    FROM fine
),
cells AS (
    SELECT
        CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END AS seats,
        factor, level, cell,
        sum(n) AS n, round(sum(g)) AS rounds, sum(sy) / sum(n) AS mean,
        sum(a) AS a, sum(b) AS b, sum(c) AS c
    FROM levels
    GROUP BY GROUPING SETS ((seats, factor, level, cell), (factor, level, cell))
)
SELECT
    seats, factor, level, cell, n, CAST(rounds AS BIGINT) AS rounds, mean,
    -- G/(G-1) · Σ e_r² / n²
    CASE WHEN rounds >= 2
         THEN rounds / (rounds - 1) * greatest(a - 2 * mean * b + mean * mean * c, 0) / (n * n)
    END AS var_mean
FROM cells;
