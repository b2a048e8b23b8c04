-- `sniff stats summary`: per seat and per bot, over the matches `timing.sql`'s
-- select_matches kept (temp tables sel, seat_players). Each row is a sufficient statistic:
-- kind 'proportion' (x successes of n: Wilson interval), 'mean' (sum and sum of squares of n
-- observations: t interval) or 'ratio' (total over n, no interval). Python finishes them.

-- name: summary_cells
WITH seat_rounds AS (
    -- one row per seat per round
    SELECT
        r.seats,
        s.lineup,
        CAST(i.seat AS TINYINT)                          AS seat,
        r.complete,
        r.points[i.seat + 1]                             AS pts,
        r.placements[i.seat + 1]                         AS pl,
        r.scoring_placements[i.seat + 1]                 AS sc,
        r.deductions[i.seat + 1]                         AS ded,
        coalesce(r.finisher = i.seat, false)             AS dominoed,
        -- the seat's side had the strictly highest round net result (partners share it)
        r.net[i.seat + 1] = list_max(r.net)
            AND len(list_filter(r.net, lambda x: x = list_max(r.net)))
                = CASE WHEN r.seats = 4 THEN 2 ELSE 1 END AS won
    FROM round_facts AS r
    JOIN sel AS s USING (match_id),
    range(r.seats) AS i(seat)
),
seat_matches AS (
    SELECT
        m.seats,
        s.lineup,
        CAST(i.seat AS TINYINT)                                         AS seat,
        m.winner IS NOT NULL AND m.winner % 2 = i.seat % 2 AND m.seats = 4
            OR m.winner IS NOT NULL AND m.winner = i.seat AND m.seats <> 4 AS won
    FROM match_facts AS m
    JOIN sel AS s USING (match_id),
    range(m.seats) AS i(seat)
    WHERE m.finished
),
per_seat AS (
    SELECT seats, lineup, seat, 'round_win_rate' AS statistic, 'proportion' AS kind,
           count(*) AS n, sum(CAST(won AS INTEGER)) AS total, NULL AS total_sq
    FROM seat_rounds WHERE complete GROUP BY ALL
    UNION ALL
    SELECT seats, lineup, seat, 'domino_rate', 'proportion',
           count(*), sum(CAST(dominoed AS INTEGER)), NULL
    FROM seat_rounds WHERE complete GROUP BY ALL
    UNION ALL
    SELECT seats, lineup, seat, 'points_per_round', 'mean',
           count(*), sum(pts), sum(pts * pts)
    FROM seat_rounds WHERE complete GROUP BY ALL
    UNION ALL
    SELECT seats, lineup, seat, 'deductions_per_round', 'mean',
           count(*), sum(ded), sum(ded * ded)
    FROM seat_rounds WHERE complete GROUP BY ALL
    UNION ALL
    SELECT seats, lineup, seat, 'points_per_placement', 'ratio', sum(pl), sum(pts), NULL
    FROM seat_rounds GROUP BY ALL
    UNION ALL
    SELECT seats, lineup, seat, 'scoring_share', 'ratio', sum(pl), sum(sc), NULL
    FROM seat_rounds GROUP BY ALL
    UNION ALL
    SELECT seats, lineup, seat, 'match_win_rate', 'proportion',
           count(*), sum(CAST(won AS INTEGER)), NULL
    FROM seat_matches GROUP BY ALL
),
named AS (
    SELECT p.*, sp.bot FROM per_seat AS p
    LEFT JOIN seat_players AS sp ON sp.lineup = p.lineup AND sp.seat = p.seat
),
by_seat_and_bot AS (
    SELECT CAST(seats AS VARCHAR) AS seats, statistic, kind, 'seat' AS "by",
           CAST(seat AS VARCHAR) AS level,
           sum(n) AS n, sum(total) AS total, sum(total_sq) AS total_sq
    FROM named GROUP BY seats, statistic, kind, seat
    UNION ALL
    SELECT CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END,
           statistic, kind, 'bot', bot, sum(n), sum(total), sum(total_sq)
    FROM named WHERE bot IS NOT NULL
    GROUP BY GROUPING SETS ((seats, statistic, kind, bot), (statistic, kind, bot))
    UNION ALL
    SELECT CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END,
           statistic, kind, 'all', 'all', sum(n), sum(total), sum(total_sq)
    FROM named
    WHERE statistic IN ('points_per_round', 'deductions_per_round',
                        'points_per_placement', 'scoring_share')
    GROUP BY GROUPING SETS ((seats, statistic, kind), (statistic, kind))
),
per_round AS (
    SELECT r.seats,
           count(*) AS n,
           sum(CAST(r.ending = 'blocked' AS INTEGER)) AS blocked,
           sum(CAST(r.net[r.leader + 1] = list_max(r.net)
                    AND len(list_filter(r.net, lambda x: x = list_max(r.net)))
                        = CASE WHEN r.seats = 4 THEN 2 ELSE 1 END AS INTEGER)) AS leader_won
    FROM round_facts AS r
    JOIN sel USING (match_id)
    WHERE r.complete
    GROUP BY r.seats
),
per_match AS (
    SELECT m.seats,
           count(*) AS n,
           sum(m.rounds) AS rounds,
           sum(m.rounds * m.rounds) AS rounds_sq,
           sum(CAST(m.winner IS NOT NULL
                    AND (m.winner = m.first_leader
                         OR m.seats = 4 AND m.winner % 2 = m.first_leader % 2) AS INTEGER))
               AS first_won
    FROM match_facts AS m
    JOIN sel USING (match_id)
    WHERE m.finished
    GROUP BY m.seats
),
overall AS (
    SELECT seats, 'blocked_rate' AS statistic, 'proportion' AS kind,
           n, blocked AS total, NULL AS total_sq FROM per_round
    UNION ALL
    SELECT seats, 'leader_round_win_rate', 'proportion', n, leader_won, NULL FROM per_round
    UNION ALL
    SELECT seats, 'rounds_per_match', 'mean', n, rounds, rounds_sq FROM per_match
    UNION ALL
    SELECT seats, 'first_mover_match_win_rate', 'proportion', n, first_won, NULL
    FROM per_match
)
SELECT seats, statistic, kind, "by", level, n, total, total_sq FROM by_seat_and_bot
UNION ALL
SELECT CASE WHEN grouping(seats) = 1 THEN 'all' ELSE CAST(seats AS VARCHAR) END,
       statistic, kind, 'all', 'all', sum(n), sum(total), sum(total_sq)
FROM overall
GROUP BY GROUPING SETS ((seats, statistic, kind), (statistic, kind));
