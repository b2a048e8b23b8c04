-- The Sniff-timing statistics of docs/statistics.md §2-§4 as DuckDB aggregates over the facts tables
-- (facts.sql). Python only adds each cell's t quantile and bounds (timing.py).

-- name: macros
-- docs/statistics.md, Words: the timing bucket of a placement index (NULL: no Sniff). The value of a
-- round for a side comes with the facts (`value`: sniff/facts.py side_value).
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
-- The same as small integers, for grouping and joining many rows: bucket 0 (lead) … 6 (none),
-- outcome 0 (played) … 4 (held_never), in report order; and back to their names.
CREATE OR REPLACE TEMP MACRO bucket_code(t) AS
    CASE
        WHEN t IS NULL THEN 6
        WHEN t <= 2 THEN t
        WHEN t <= 4 THEN 3
        WHEN t <= 7 THEN 4
        ELSE 5
    END;
CREATE OR REPLACE TEMP MACRO bucket_name(code) AS
    ['lead', '1', '2', '3-4', '5-7', '8+', 'none'][code + 1];
CREATE OR REPLACE TEMP MACRO outcome_code(outcome) AS
    list_position(['played', 'held_self', 'held_partner', 'held_other', 'held_never'], outcome) - 1;
CREATE OR REPLACE TEMP MACRO outcome_name(code) AS
    ['played', 'held_self', 'held_partner', 'held_other', 'held_never'][code + 1];
-- Two decisions of one round and outcome: the bit of each relation under which they fall in
-- one holding cell (bit 0: the outcome alone; then bucket, double, both, mover_is_leader,
-- +bucket, mover_bot, +bucket, matchup, +bucket), given which attributes they share.
CREATE OR REPLACE TEMP MACRO pair_mask(sb, sd, sl, sm, su) AS
    1
    + CASE WHEN sb THEN 2 ELSE 0 END
    + CASE WHEN sd THEN 4 ELSE 0 END
    + CASE WHEN sb AND sd THEN 8 ELSE 0 END
    + CASE WHEN sl THEN 16 ELSE 0 END
    + CASE WHEN sb AND sl THEN 32 ELSE 0 END
    + CASE WHEN sm THEN 64 ELSE 0 END
    + CASE WHEN sb AND sm THEN 128 ELSE 0 END
    + CASE WHEN su THEN 256 ELSE 0 END
    + CASE WHEN sb AND su THEN 512 ELSE 0 END;
-- docs/statistics.md §4: a seat's bot, then the other seats' bots in turn order from that seat.
CREATE OR REPLACE TEMP MACRO matchup(players, seat) AS
    CASE WHEN players IS NOT NULL AND seat IS NOT NULL
         THEN array_to_string(list_concat(players[seat + 1:], players[:seat]), '|')
    END;

-- name: select_matches
-- The matches the filters keep, each numbered (mk) so that a round gets an integer id.
-- `$bots` is a list of names repeated over the seats, as `--bots` means when playing.
CREATE OR REPLACE TEMP TABLE sel0 AS
SELECT row_number() OVER () AS mk, match_id, seats, variant, players, rounds, incomplete_rounds
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

-- name: select_seat_pairs
-- For two seats of one lineup: do they have the same bot, the same matchup?
CREATE OR REPLACE TEMP TABLE seat_pairs AS
SELECT a.lineup, a.seat AS seat_a, b.seat AS seat_b,
       a.bot = b.bot AS same_bot, a.matchup = b.matchup AS same_matchup
FROM seat_players AS a
JOIN seat_players AS b USING (lineup);

-- name: select_variant_codes
CREATE OR REPLACE TEMP TABLE variant_codes AS
SELECT CAST(row_number() OVER (ORDER BY variant) AS INTEGER) AS vc, variant
FROM (SELECT DISTINCT variant FROM sel0);

-- name: select_with_lineups
CREATE OR REPLACE TEMP TABLE sel AS
SELECT s.mk, s.match_id, s.seats, s.variant, v.vc, l.lineup, s.rounds, s.incomplete_rounds
FROM sel0 AS s
JOIN variant_codes AS v ON v.variant = s.variant
LEFT JOIN lineups AS l ON l.players = s.players;

-- name: selection_counts
SELECT count(*)                               AS matches,
       coalesce(sum(rounds - incomplete_rounds), 0) AS complete_rounds,
       coalesce(sum(incomplete_rounds), 0)     AS incomplete_rounds
FROM sel;

-- name: rounds_facts
-- docs/statistics.md §1: one row per complete round, its columns in order.
SELECT r.match_id, r.round, r.seats, r.variant, r.leader, r.sniff, r.maker, r.sniff_index,
       r."double", r.orientation, r.covered_after, r.net, r.sniff_points,
       r.sniff_points_maker_side, r.sniff_points_others
FROM round_facts AS r
JOIN sel USING (match_id)
WHERE r.complete
ORDER BY sel.mk, r.round;

-- name: timing_cells
-- docs/statistics.md §2: per bucket, the value of each complete round for the maker's side (for
-- `none`, the leader's side). Rounds are first summed per combination of every factor's
-- level (a few thousand rows), then rolled up per factor, within each seat count and pooled.
-- Values are multiples of 1/2, so these sums are exact in doubles.
WITH fine AS (
    SELECT
        r.seats,
        s.variant,
        timing_bucket(r.sniff_index)    AS bucket,
        r."double"                      AS dbl,
        r.maker = r.leader              AS maker_is_leader,
        s.lineup,
        r.maker,
        count(*)                        AS n,
        sum(r.v)                        AS sy,
        sum(r.v * r.v)                  AS syy
    FROM (
        SELECT *, value AS v
        FROM round_facts
        WHERE complete
    ) AS r
    JOIN sel AS s USING (match_id)
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

-- name: holding_cells
-- docs/statistics.md §3: per outcome and per outcome × bucket, the mean value of the round for the
-- mover's side, with its variance clustered by round. A cell groups those decisions of a
-- round that share its outcome and, depending on the cell, bucket and the factor's level;
-- with s_r and n_r the sum and count of such a group and e_r = s_r - n_r·m its residuals,
--   Σ e_r² = A - 2mB + m²C,  A = Σ s_r²,  B = Σ s_r·n_r,  C = Σ n_r²,  G = number of groups.
-- For decision i let c(i) and p(i) be the count and value sum of the EARLIER decisions of
-- its group; then A = Σ y² + 2Σ y·p, B = Σ y + Σ (c·y + p), C = n + 2Σ c and
-- G = n - #{i : c(i) > 0}: sums over decisions, which roll up over levels and seat counts.
-- Σ y·p, Σ (c·y + p) and Σ c are sums over pairs of one group (an earlier and a later
-- decision). The facts say which decisions share their round and outcome with an earlier
-- or a later one (`same_outcome_before/after`): only those form pairs; every other decision
-- adds to n, Σ y and Σ y² only.
WITH dec AS NOT MATERIALIZED (
    -- small integers throughout: these are the many rows
    SELECT
        s.mk * 65536 + d.round                  AS rid,
        d.placement_index                       AS idx,
        d.seats,
        s.vc,
        coalesce(s.lineup, 0)                   AS lineup,  -- 0: players unknown
        d.seat,
        outcome_code(d.outcome)                 AS oc,
        bucket_code(d.placement_index)          AS bc,
        d."double"                              AS dbl,
        d.mover_is_leader                       AS mil,
        d.value                                 AS y,
        d.same_outcome_before                   AS before,
        d.same_outcome_after                    AS after
    FROM sniff_decisions AS d
    JOIN sel AS s USING (match_id)
),
base AS (
    SELECT seats, vc, oc, bc, dbl, mil, lineup, seat,
           count(*) AS n, sum(y) AS sy, sum(y * y) AS syy
    FROM dec
    GROUP BY ALL
),
later_members AS (
    -- decisions with an earlier one of the same round and outcome (few), and those with a
    -- later one; `grp` is one integer for (round, outcome), the join key of the pairs
    SELECT *, rid * 8 + oc AS grp FROM dec WHERE before > 0
),
earlier_members AS (
    SELECT rid * 8 + oc AS grp, idx, bc, dbl, mil, seat, y FROM dec WHERE after > 0
),
pairs AS (
    -- each such decision (a) with each earlier one of its round and outcome (b); `mask` has
    -- bit R set when they fall in one group under relation R (same outcome, and: o nothing
    -- more, ob bucket, od double, obd both, ol mover_is_leader, obl +bucket, om mover_bot,
    -- obm +bucket, ou matchup, obu +bucket)
    SELECT
        a.rid, a.idx, a.before, a.seats, a.vc, a.oc, a.bc, a.dbl, a.mil, a.lineup, a.seat,
        a.y AS ya, b.y AS yb,
        pair_mask(a.bc = b.bc, a.dbl = b.dbl, a.mil = b.mil,
                  coalesce(sp.same_bot, false), coalesce(sp.same_matchup, false)) AS mask
    FROM later_members AS a
    JOIN earlier_members AS b ON b.grp = a.grp AND b.idx < a.idx
    LEFT JOIN seat_pairs AS sp
        ON sp.lineup = a.lineup AND sp.seat_a = a.seat AND sp.seat_b = b.seat
),
by_mask AS (
    -- per fine key and mask: Σ ya·yb, Σ (ya + yb), the count of pairs, and of pairs whose
    -- later decision has only that one earlier partner (then the pair alone says whether
    -- the decision has an earlier partner under each relation)
    SELECT seats, vc, oc, bc, dbl, mil, lineup, seat, mask,
           sum(ya * yb) AS s_yy, sum(ya + yb) AS s_y, count(*) AS cnt,
           count(*) FILTER (WHERE before = 1) AS single
    FROM pairs
    GROUP BY ALL
),
linear AS (
    -- per relation R, over the pairs of a group (b before a):
    --   Σ_i y·p = Σ_pairs ya·yb,  Σ_i (c·y + p) = Σ_pairs (ya + yb),  Σ_i c = #pairs;
    --   k1_R: decisions with one earlier partner, which shares R
    SELECT
        seats, vc, oc, bc, dbl, mil, lineup, seat,
        sum(CASE WHEN mask & 1 <> 0 THEN s_yy ELSE 0 END) AS yp_o,
        sum(CASE WHEN mask & 1 <> 0 THEN s_y ELSE 0 END) AS cp_o,
        sum(CASE WHEN mask & 1 <> 0 THEN cnt ELSE 0 END) AS c_o,
        sum(CASE WHEN mask & 1 <> 0 THEN single ELSE 0 END) AS k1_o,
        sum(CASE WHEN mask & 2 <> 0 THEN s_yy ELSE 0 END) AS yp_ob,
        sum(CASE WHEN mask & 2 <> 0 THEN s_y ELSE 0 END) AS cp_ob,
        sum(CASE WHEN mask & 2 <> 0 THEN cnt ELSE 0 END) AS c_ob,
        sum(CASE WHEN mask & 2 <> 0 THEN single ELSE 0 END) AS k1_ob,
        sum(CASE WHEN mask & 4 <> 0 THEN s_yy ELSE 0 END) AS yp_od,
        sum(CASE WHEN mask & 4 <> 0 THEN s_y ELSE 0 END) AS cp_od,
        sum(CASE WHEN mask & 4 <> 0 THEN cnt ELSE 0 END) AS c_od,
        sum(CASE WHEN mask & 4 <> 0 THEN single ELSE 0 END) AS k1_od,
        sum(CASE WHEN mask & 8 <> 0 THEN s_yy ELSE 0 END) AS yp_obd,
        sum(CASE WHEN mask & 8 <> 0 THEN s_y ELSE 0 END) AS cp_obd,
        sum(CASE WHEN mask & 8 <> 0 THEN cnt ELSE 0 END) AS c_obd,
        sum(CASE WHEN mask & 8 <> 0 THEN single ELSE 0 END) AS k1_obd,
        sum(CASE WHEN mask & 16 <> 0 THEN s_yy ELSE 0 END) AS yp_ol,
        sum(CASE WHEN mask & 16 <> 0 THEN s_y ELSE 0 END) AS cp_ol,
        sum(CASE WHEN mask & 16 <> 0 THEN cnt ELSE 0 END) AS c_ol,
        sum(CASE WHEN mask & 16 <> 0 THEN single ELSE 0 END) AS k1_ol,
        sum(CASE WHEN mask & 32 <> 0 THEN s_yy ELSE 0 END) AS yp_obl,
        sum(CASE WHEN mask & 32 <> 0 THEN s_y ELSE 0 END) AS cp_obl,
        sum(CASE WHEN mask & 32 <> 0 THEN cnt ELSE 0 END) AS c_obl,
        sum(CASE WHEN mask & 32 <> 0 THEN single ELSE 0 END) AS k1_obl,
        sum(CASE WHEN mask & 64 <> 0 THEN s_yy ELSE 0 END) AS yp_om,
        sum(CASE WHEN mask & 64 <> 0 THEN s_y ELSE 0 END) AS cp_om,
        sum(CASE WHEN mask & 64 <> 0 THEN cnt ELSE 0 END) AS c_om,
        sum(CASE WHEN mask & 64 <> 0 THEN single ELSE 0 END) AS k1_om,
        sum(CASE WHEN mask & 128 <> 0 THEN s_yy ELSE 0 END) AS yp_obm,
        sum(CASE WHEN mask & 128 <> 0 THEN s_y ELSE 0 END) AS cp_obm,
        sum(CASE WHEN mask & 128 <> 0 THEN cnt ELSE 0 END) AS c_obm,
        sum(CASE WHEN mask & 128 <> 0 THEN single ELSE 0 END) AS k1_obm,
        sum(CASE WHEN mask & 256 <> 0 THEN s_yy ELSE 0 END) AS yp_ou,
        sum(CASE WHEN mask & 256 <> 0 THEN s_y ELSE 0 END) AS cp_ou,
        sum(CASE WHEN mask & 256 <> 0 THEN cnt ELSE 0 END) AS c_ou,
        sum(CASE WHEN mask & 256 <> 0 THEN single ELSE 0 END) AS k1_ou,
        sum(CASE WHEN mask & 512 <> 0 THEN s_yy ELSE 0 END) AS yp_obu,
        sum(CASE WHEN mask & 512 <> 0 THEN s_y ELSE 0 END) AS cp_obu,
        sum(CASE WHEN mask & 512 <> 0 THEN cnt ELSE 0 END) AS c_obu,
        sum(CASE WHEN mask & 512 <> 0 THEN single ELSE 0 END) AS k1_obu
    FROM by_mask
    GROUP BY ALL
),
multi AS (
    -- decisions with two or more earlier partners (rare): under which relations any shares
    SELECT any_value(a.seats) AS seats, any_value(a.vc) AS vc, any_value(a.oc) AS oc,
           any_value(a.bc) AS bc, any_value(a.dbl) AS dbl, any_value(a.mil) AS mil,
           any_value(a.lineup) AS lineup, any_value(a.seat) AS seat,
           bit_or(
               pair_mask(a.bc = b.bc, a.dbl = b.dbl, a.mil = b.mil,
                         coalesce(sp.same_bot, false), coalesce(sp.same_matchup, false)) 
           ) AS m
    FROM later_members AS a
    JOIN earlier_members AS b ON b.grp = a.grp AND b.idx < a.idx
    LEFT JOIN seat_pairs AS sp
        ON sp.lineup = a.lineup AND sp.seat_a = a.seat AND sp.seat_b = b.seat
    WHERE a.before >= 2
    GROUP BY a.rid, a.idx
),
counted AS (
    -- per relation R: k2_R, the decisions of `multi` with an earlier partner under R
    SELECT
        seats, vc, oc, bc, dbl, mil, lineup, seat,
        count(*) FILTER (WHERE m & 1 <> 0) AS k2_o,
        count(*) FILTER (WHERE m & 2 <> 0) AS k2_ob,
        count(*) FILTER (WHERE m & 4 <> 0) AS k2_od,
        count(*) FILTER (WHERE m & 8 <> 0) AS k2_obd,
        count(*) FILTER (WHERE m & 16 <> 0) AS k2_ol,
        count(*) FILTER (WHERE m & 32 <> 0) AS k2_obl,
        count(*) FILTER (WHERE m & 64 <> 0) AS k2_om,
        count(*) FILTER (WHERE m & 128 <> 0) AS k2_obm,
        count(*) FILTER (WHERE m & 256 <> 0) AS k2_ou,
        count(*) FILTER (WHERE m & 512 <> 0) AS k2_obu
    FROM multi
    GROUP BY ALL
),
corr AS (
    -- k_R = #{i : c_R(i) > 0}, so that G = n - k
    SELECT l.*,
        l.k1_o + coalesce(c.k2_o, 0) AS k_o,
        l.k1_ob + coalesce(c.k2_ob, 0) AS k_ob,
        l.k1_od + coalesce(c.k2_od, 0) AS k_od,
        l.k1_obd + coalesce(c.k2_obd, 0) AS k_obd,
        l.k1_ol + coalesce(c.k2_ol, 0) AS k_ol,
        l.k1_obl + coalesce(c.k2_obl, 0) AS k_obl,
        l.k1_om + coalesce(c.k2_om, 0) AS k_om,
        l.k1_obm + coalesce(c.k2_obm, 0) AS k_obm,
        l.k1_ou + coalesce(c.k2_ou, 0) AS k_ou,
        l.k1_obu + coalesce(c.k2_obu, 0) AS k_obu
    FROM linear AS l
    LEFT JOIN counted AS c USING (seats, vc, oc, bc, dbl, mil, lineup, seat)
),
fine AS (
    SELECT
        b.seats, v.variant, outcome_name(b.oc) AS outcome, bucket_name(b.bc) AS bucket,
        b.dbl, b.mil, p.bot, p.matchup, b.n, b.sy, b.syy,
        COLUMNS(c.* EXCLUDE (seats, vc, oc, bc, dbl, mil, lineup, seat))
    FROM base AS b
    LEFT JOIN corr AS c USING (seats, vc, oc, bc, dbl, mil, lineup, seat)
    LEFT JOIN seat_players AS p ON p.lineup = b.lineup AND p.seat = b.seat
    JOIN variant_codes AS v ON v.vc = b.vc
),
levels AS (
    SELECT seats, 'all' AS factor, 'all' AS level, outcome AS cell,
           n, sy, syy, yp_o AS yp, cp_o AS cp, c_o AS c, k_o AS k FROM fine
    UNION ALL
    SELECT seats, 'all', 'all', outcome || '/' || bucket,
           n, sy, syy, yp_ob, cp_ob, c_ob, k_ob FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), outcome,
           n, sy, syy, yp_od, cp_od, c_od, k_od FROM fine
    UNION ALL
    SELECT seats, 'double', CAST(dbl AS VARCHAR), outcome || '/' || bucket,
           n, sy, syy, yp_obd, cp_obd, c_obd, k_obd FROM fine
    UNION ALL
    SELECT seats, 'mover_is_leader', CAST(mil AS VARCHAR), outcome,
           n, sy, syy, yp_ol, cp_ol, c_ol, k_ol FROM fine
    UNION ALL
    SELECT seats, 'mover_is_leader', CAST(mil AS VARCHAR), outcome || '/' || bucket,
           n, sy, syy, yp_obl, cp_obl, c_obl, k_obl FROM fine
    UNION ALL
    SELECT seats, 'mover_bot', bot, outcome,
           n, sy, syy, yp_om, cp_om, c_om, k_om FROM fine WHERE bot IS NOT NULL
    UNION ALL
    SELECT seats, 'mover_bot', bot, outcome || '/' || bucket,
           n, sy, syy, yp_obm, cp_obm, c_obm, k_obm FROM fine WHERE bot IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, outcome,
           n, sy, syy, yp_ou, cp_ou, c_ou, k_ou FROM fine WHERE matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'matchup', matchup, outcome || '/' || bucket,
           n, sy, syy, yp_obu, cp_obu, c_obu, k_obu FROM fine WHERE matchup IS NOT NULL
    UNION ALL
    SELECT seats, 'variant', variant, outcome,
           n, sy, syy, yp_o, cp_o, c_o, k_o FROM fine
    UNION ALL
    SELECT seats, 'variant', variant, outcome || '/' || bucket,
           n, sy, syy, yp_ob, cp_ob, c_ob, k_ob FROM fine
),
cells AS (
    SELECT
        CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END AS seats,
        factor, level, cell,
        sum(n) AS n,
        sum(n) - coalesce(sum(k), 0) AS rounds,
        sum(sy) / sum(n) AS mean,
        sum(syy) + 2 * coalesce(sum(yp), 0) AS a,
        sum(sy) + coalesce(sum(cp), 0) AS b,
        sum(n) + 2 * coalesce(sum(c), 0) AS c
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
