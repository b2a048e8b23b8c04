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
-- The matches the filters keep, each numbered (mk) so that a round gets an integer id.
-- `$bots` is a list of names repeated over the seats, as `--bots` means when playing.
CREATE OR REPLACE TEMP TABLE sel0 AS
SELECT row_number() OVER () AS mk, match_id, seats, variant, players
FROM match_facts
WHERE ($seats IS NULL OR seats = $seats)
  AND ($variant IS NULL OR variant = $variant)
  AND ($sources IS NULL OR list_contains($sources, source))
  AND ($run IS NULL OR run = $run)
  AND ($bots IS NULL
       OR players = list_transform(range(seats), lambda i: $bots[i % len($bots) + 1]));

-- name: select_lineups
-- The distinct lists of players (few), so each seat's bot and matchup is built once per
-- lineup, not once per round.
CREATE OR REPLACE TEMP TABLE lineups AS
SELECT row_number() OVER () AS lineup, players
FROM (SELECT DISTINCT players FROM sel0 WHERE players IS NOT NULL);

-- name: select_seat_players
CREATE OR REPLACE TEMP TABLE seat_players AS
SELECT l.lineup, CAST(s.seat AS TINYINT) AS seat, l.players[s.seat + 1] AS bot,
       matchup(l.players, s.seat) AS matchup
FROM lineups AS l, range(len(l.players)) AS s(seat);

-- name: select_with_lineups
CREATE OR REPLACE TEMP TABLE sel AS
SELECT s.mk, s.match_id, s.seats, s.variant, l.lineup
FROM sel0 AS s
LEFT JOIN lineups AS l USING (players);

-- name: select_rounds
-- The complete rounds of the selected matches, with an integer round id (rid).
CREATE OR REPLACE TEMP TABLE rnd AS
SELECT r.match_id, r.round, s.mk * 65536 + r.round AS rid, r.seats, s.variant, s.lineup,
       r.leader, r.maker, r.sniff_index, r."double" AS dbl, r.net
FROM round_facts AS r
JOIN sel AS s USING (match_id)
WHERE r.complete;

-- name: selection_counts
SELECT
    (SELECT count(*) FROM sel)                                       AS matches,
    (SELECT count(*) FROM rnd)                                       AS complete_rounds,
    (SELECT coalesce(sum(m.incomplete_rounds), 0)
     FROM match_facts AS m SEMI JOIN sel USING (match_id))           AS incomplete_rounds;

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
WITH fine AS (
    SELECT
        seats,
        variant,
        timing_bucket(sniff_index)                          AS bucket,
        dbl,
        maker = leader                                      AS maker_is_leader,
        lineup,
        maker,
        count(*)                                            AS n,
        sum(side_value(net, seats, coalesce(maker, leader)))            AS sy,
        sum(side_value(net, seats, coalesce(maker, leader)) ** 2)       AS syy
    FROM rnd
    GROUP BY ALL
),
named AS (
    SELECT f.*, p.bot AS maker_bot, p.matchup
    FROM fine AS f
    LEFT JOIN seat_players AS p ON p.lineup = f.lineup AND p.seat = f.maker
),
levels AS (
    SELECT seats, 'all' AS factor, 'all' AS level, bucket, n, sy, syy FROM named
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), bucket, n, sy, syy
    FROM named WHERE bucket <> 'none'
    UNION ALL
    SELECT seats, 'maker_is_leader', CAST(maker_is_leader AS VARCHAR), bucket, n, sy, syy
    FROM named WHERE bucket <> 'none'
    UNION ALL
    SELECT seats, 'maker_bot', maker_bot, bucket, n, sy, syy
    FROM named WHERE bucket <> 'none' AND maker_bot IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, bucket, n, sy, syy
    FROM named WHERE bucket <> 'none' AND matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'variant', variant, bucket, n, sy, syy FROM named
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

-- name: select_decisions
-- The Sniff decisions of the selected complete rounds, with the value of the round for the
-- mover's side (y) and the mover's bot and matchup.
CREATE OR REPLACE TEMP TABLE dec AS
SELECT
    rnd.rid,
    d.placement_index                          AS idx,
    rnd.seats,
    rnd.variant,
    rnd.lineup,
    d.seat,
    d.outcome,
    timing_bucket(d.placement_index)           AS bucket,
    d."double"                                 AS dbl,
    d.mover_is_leader                          AS mil,
    p.bot,
    p.matchup,
    side_value(rnd.net, rnd.seats, d.seat)     AS y
FROM sniff_decisions AS d
JOIN rnd USING (match_id, round)
LEFT JOIN seat_players AS p ON p.lineup = rnd.lineup AND p.seat = d.seat;

-- name: holding_cells
-- STATS.md §3: per outcome and per outcome × bucket, the mean value for the mover's side
-- with its variance clustered by round. A cell groups a round's decisions that share its
-- outcome and, depending on the cell, bucket and the factor's level; with s_r and n_r the
-- sum and count of such a group and e_r = s_r - n_r·m its residual sum,
--   Σ e_r² = A - 2mB + m²C,  A = Σ s_r²,  B = Σ s_r·n_r,  C = Σ n_r²,  G = number of groups.
-- For decision i let c(i) and p(i) be the count and value sum of the EARLIER decisions of
-- its round in its group; then A = Σ y² + 2Σ y·p, B = Σ y + Σ c·y + Σ p, C = n + 2Σ c and
-- G = #{i : c(i) = 0}: sums over decisions, which roll up over levels and seat counts.
-- Only decisions that share round and outcome with an earlier one have c > 0 (few).
WITH earlier AS (
    SELECT
        a.rid, a.idx,
        count(*)                                                        AS c_o,
        sum(b.y)                                                        AS p_o,
        sum(CAST(a.bucket = b.bucket AS INTEGER))                       AS c_ob,
        sum(CASE WHEN a.bucket = b.bucket THEN b.y ELSE 0 END)          AS p_ob,
        sum(CAST(a.dbl = b.dbl AS INTEGER))                             AS c_od,
        sum(CASE WHEN a.dbl = b.dbl THEN b.y ELSE 0 END)                AS p_od,
        sum(CAST(a.bucket = b.bucket AND a.dbl = b.dbl AS INTEGER))     AS c_obd,
        sum(CASE WHEN a.bucket = b.bucket AND a.dbl = b.dbl THEN b.y ELSE 0 END) AS p_obd,
        sum(CAST(a.mil = b.mil AS INTEGER))                             AS c_ol,
        sum(CASE WHEN a.mil = b.mil THEN b.y ELSE 0 END)                AS p_ol,
        sum(CAST(a.bucket = b.bucket AND a.mil = b.mil AS INTEGER))     AS c_obl,
        sum(CASE WHEN a.bucket = b.bucket AND a.mil = b.mil THEN b.y ELSE 0 END) AS p_obl,
        sum(CAST(a.bot IS NOT DISTINCT FROM b.bot AS INTEGER))          AS c_om,
        sum(CASE WHEN a.bot IS NOT DISTINCT FROM b.bot THEN b.y ELSE 0 END) AS p_om,
        sum(CAST(a.bucket = b.bucket AND a.bot IS NOT DISTINCT FROM b.bot AS INTEGER)) AS c_obm,
        sum(CASE WHEN a.bucket = b.bucket AND a.bot IS NOT DISTINCT FROM b.bot
                 THEN b.y ELSE 0 END)                                   AS p_obm,
        sum(CAST(a.matchup IS NOT DISTINCT FROM b.matchup AS INTEGER))  AS c_ou,
        sum(CASE WHEN a.matchup IS NOT DISTINCT FROM b.matchup THEN b.y ELSE 0 END) AS p_ou,
        sum(CAST(a.bucket = b.bucket AND a.matchup IS NOT DISTINCT FROM b.matchup
                 AS INTEGER))                                           AS c_obu,
        sum(CASE WHEN a.bucket = b.bucket AND a.matchup IS NOT DISTINCT FROM b.matchup
                 THEN b.y ELSE 0 END)                                   AS p_obu
    FROM dec AS a
    JOIN dec AS b ON b.rid = a.rid AND b.outcome = a.outcome AND b.idx < a.idx
    GROUP BY a.rid, a.idx
),
obs AS (
    SELECT d.*,
        coalesce(c_o, 0) AS c_o, coalesce(p_o, 0) AS p_o,
        coalesce(c_ob, 0) AS c_ob, coalesce(p_ob, 0) AS p_ob,
        coalesce(c_od, 0) AS c_od, coalesce(p_od, 0) AS p_od,
        coalesce(c_obd, 0) AS c_obd, coalesce(p_obd, 0) AS p_obd,
        coalesce(c_ol, 0) AS c_ol, coalesce(p_ol, 0) AS p_ol,
        coalesce(c_obl, 0) AS c_obl, coalesce(p_obl, 0) AS p_obl,
        coalesce(c_om, 0) AS c_om, coalesce(p_om, 0) AS p_om,
        coalesce(c_obm, 0) AS c_obm, coalesce(p_obm, 0) AS p_obm,
        coalesce(c_ou, 0) AS c_ou, coalesce(p_ou, 0) AS p_ou,
        coalesce(c_obu, 0) AS c_obu, coalesce(p_obu, 0) AS p_obu
    FROM dec AS d
    LEFT JOIN earlier AS e USING (rid, idx)
),
fine AS (
    -- per relation R: a_R = Σ y² + 2Σ y·p, b_R = Σ y + Σ c·y + Σ p, c_R = n + 2Σ c, g_R
    SELECT
        seats, variant, outcome, bucket, dbl, mil, bot, matchup,
        count(*) AS n, sum(y) AS sy, sum(y * y) AS syy,
        sum(y * p_o) AS yp_o, sum(c_o * y + p_o) AS cp_o, sum(c_o) AS c_o,
        count(*) FILTER (WHERE c_o = 0) AS g_o,
        sum(y * p_ob) AS yp_ob, sum(c_ob * y + p_ob) AS cp_ob, sum(c_ob) AS c_ob,
        count(*) FILTER (WHERE c_ob = 0) AS g_ob,
        sum(y * p_od) AS yp_od, sum(c_od * y + p_od) AS cp_od, sum(c_od) AS c_od,
        count(*) FILTER (WHERE c_od = 0) AS g_od,
        sum(y * p_obd) AS yp_obd, sum(c_obd * y + p_obd) AS cp_obd, sum(c_obd) AS c_obd,
        count(*) FILTER (WHERE c_obd = 0) AS g_obd,
        sum(y * p_ol) AS yp_ol, sum(c_ol * y + p_ol) AS cp_ol, sum(c_ol) AS c_ol,
        count(*) FILTER (WHERE c_ol = 0) AS g_ol,
        sum(y * p_obl) AS yp_obl, sum(c_obl * y + p_obl) AS cp_obl, sum(c_obl) AS c_obl,
        count(*) FILTER (WHERE c_obl = 0) AS g_obl,
        sum(y * p_om) AS yp_om, sum(c_om * y + p_om) AS cp_om, sum(c_om) AS c_om,
        count(*) FILTER (WHERE c_om = 0) AS g_om,
        sum(y * p_obm) AS yp_obm, sum(c_obm * y + p_obm) AS cp_obm, sum(c_obm) AS c_obm,
        count(*) FILTER (WHERE c_obm = 0) AS g_obm,
        sum(y * p_ou) AS yp_ou, sum(c_ou * y + p_ou) AS cp_ou, sum(c_ou) AS c_ou,
        count(*) FILTER (WHERE c_ou = 0) AS g_ou,
        sum(y * p_obu) AS yp_obu, sum(c_obu * y + p_obu) AS cp_obu, sum(c_obu) AS c_obu,
        count(*) FILTER (WHERE c_obu = 0) AS g_obu
    FROM obs
    GROUP BY ALL
),
levels AS (
    SELECT seats, 'all' AS factor, 'all' AS level, outcome AS cell,
           n, sy, syy, yp_o AS yp, cp_o AS cp, c_o AS c, g_o AS g FROM fine
    UNION ALL
    SELECT seats, 'all', 'all', outcome || '/' || bucket,
           n, sy, syy, yp_ob, cp_ob, c_ob, g_ob FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), outcome,
           n, sy, syy, yp_od, cp_od, c_od, g_od FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), outcome || '/' || bucket,
           n, sy, syy, yp_obd, cp_obd, c_obd, g_obd FROM fine
    UNION ALL
    SELECT seats, 'mover_is_leader', CAST(mil AS VARCHAR), outcome,
           n, sy, syy, yp_ol, cp_ol, c_ol, g_ol FROM fine
    UNION ALL
    SELECT seats, 'mover_is_leader', CAST(mil AS VARCHAR), outcome || '/' || bucket,
           n, sy, syy, yp_obl, cp_obl, c_obl, g_obl FROM fine
    UNION ALL
    SELECT seats, 'mover_bot', bot, outcome,
           n, sy, syy, yp_om, cp_om, c_om, g_om FROM fine WHERE bot IS NOT NULL
    UNION ALL
    SELECT seats, 'mover_bot', bot, outcome || '/' || bucket,
           n, sy, syy, yp_obm, cp_obm, c_obm, g_obm FROM fine WHERE bot IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, outcome,
           n, sy, syy, yp_ou, cp_ou, c_ou, g_ou FROM fine WHERE matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, outcome || '/' || bucket,
           n, sy, syy, yp_obu, cp_obu, c_obu, g_obu FROM fine WHERE matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'variant', variant, outcome,
           n, sy, syy, yp_o, cp_o, c_o, g_o FROM fine
    UNION ALL
    SELECT seats, 'variant', variant, outcome || '/' || bucket,
           n, sy, syy, yp_ob, cp_ob, c_ob, g_ob FROM fine
),
cells AS (
    SELECT
        CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END AS seats,
        factor, level, cell,
        sum(n) AS n,
        sum(g) AS rounds,
        sum(sy) / sum(n) AS mean,
        sum(syy) + 2 * sum(yp) AS a,
        sum(sy) + sum(cp) AS b,
        sum(n) + 2 * sum(c) AS c
    FROM levels
    GROUP BY GROUPING SETS ((seats, factor, level, cell), (factor, level, cell))
)
SELECT
    seats, factor, level, cell, n, rounds, mean,
    -- G/(G-1) · Σ e_r² / n²
    CASE WHEN rounds >= 2
         THEN rounds / (rounds - 1) * greatest(a - 2 * mean * b + mean * mean * c, 0) / (n * n)
    END AS var_mean
FROM cells;
