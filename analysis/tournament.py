"""Duplicate tournaments: every deal played once for each rotation of the bots over the seats.

A tournament is a list of bots, a seat count and a number of deals. Deal d
is the match seed `seed + d`: the engine deals every round of a match from
its seed, so the matches of one deal see the same tiles round by round
(until their play makes them last a different number of rounds). Each deal
is played once per rotation: in rotation r seat i plays `bots[(i + r) % k]`
(k bots), so over the k rotations every bot sits in every seat once and the
luck of the deal cancels out of the comparisons.

The results, all clustered by deal (the rotations of one deal share its
tiles, so they are correlated; deals are independent):

* a bot's **net result** in a match is the mean, over the seats it holds, of
  its side's final score minus the mean of the other sides' (docs/statistics.md's side
  value, over a whole match); its per-deal value is the mean over the
  rotations it plays, and its mean is over deals with a Student t 95%
  interval on deals - 1 degrees of freedom;
* the **head-to-head margin** of A over B is A's side's final score minus
  B's side's, in the matches where they sit on opposing sides, the same way;
* a **rating**: Bradley-Terry strengths fitted by Hunter's MM iterations to
  the pairwise results (for each match and each pair of bots on opposing
  sides, a win for the side that scored more, half each for a tie), with one
  virtual tie between every pair so that a bot that always wins stays
  finite; shown on the Elo scale (400 log10, mean 0), with a 95% interval
  from a bootstrap over deals seeded from the tournament's seed.

With two bots a tournament may be a sequential test (`Settings.sprt`,
analysis/stats/sprt.py): its deals are then the most it may play, the test is
updated after each deal in deal order, and the tournament stops at the deal
that decides it; the deals after it are discarded unplayed or unlogged, so
what is logged and reported is exactly the deals counted. Optionally each
round that is one position in every rotation of its deal is measured
against its double-dummy par (analysis/tournament_par.py).

Before its first deal a tournament commits to the seeds of all its deals
(`SeedsCommitment`, sniff/seeds.py's `tournament_seeds_commitment`): each
match logs the commitment, how many seeds it covers and its deal's index in
its match_created detail, and the salt that opens it in its match_ended
detail, where the chain covers them; `sniff audit --db` opens it again
(docs/dealing.md), also when a sequential test stopped before the last deal.

Deals run in a process pool (analysis.parallel), in order, so the results
and the logged events do not depend on the number of workers. Every match
is logged as the service would (service.match_recorder.EventRecorder),
`source: simulated` with the tournament's id as `run_id` and its `players`.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import secrets
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from analysis.bot_matches import play_bots
from analysis.parallel import chunked, ordered_map
from analysis.rollout.par import RoundPar
from analysis.stats.sprt import Sequential, Sprt, SprtOutcome, run_sprt
from analysis.stats.tdist import t975
from analysis.tournament_par import bot_against_par, deal_json, deal_pars, unsolved
from service.clock import TimeControl
from service.errors import BadArgument
from service.match_recorder import EventRecorder
from service.storage.events import EventRow, rows_to_arrow
from sniff import make_bot
from sniff.rules import team_of
from sniff.seeds import (
    TOURNAMENT_SALT_SIZE,
    match_seed,
    rotation_bot_seed,
    tournament_seeds_commitment,
)

DEALS_MAX = 5_000
"""Deals a tournament may have: its events are held in memory until the one transaction."""
SEARCH_BOTS = frozenset({"rollout", "ismcts"})
"""Bots that search at every decision: their deals are handed to the workers one at a time."""
BOOTSTRAP = 200
"""Bootstrap resamples of the deals for the rating's interval."""


def rotations(bots: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """The seat assignment of each rotation: in rotation r seat i plays `bots[(i + r) % k]`."""
    k = len(bots)
    return [tuple(bots[(i + r) % k] for i in range(seats)) for r in range(k)]


def tournament_id(settings: dict[str, Any]) -> str:
    """`tournament-` and 12 hex digits of a hash of its settings: the same tournament run
    again has the same id (and its matches, already logged, are left as they are)."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return "tournament-" + hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Settings:
    bots: tuple[str, ...]
    seats: int
    deals: int
    seed: int = 0
    variant: str = "american"
    round_limit: int | None = None
    target: int | None = None
    sprt: Sprt | None = None
    """A sequential test of the first bot against the second: `deals` is then the most
    deals it may play."""
    remote: tuple[str, ...] = ()
    """The bots (of `bots`) registered with a service's arena, played there
    (analysis/tournament_remote.py); the others are played in process."""
    time_control: TimeControl | None = None
    """Every match's time control (the service keeps the clocks): with remote bots only."""

    def check(self) -> None:
        """ValueError for a tournament that cannot be played."""
        if len(self.bots) < 2:
            raise ValueError("a tournament needs at least 2 bots, like --bots rollout,greedy")
        if self.sprt is not None:
            if len(self.bots) != 2:
                raise ValueError(
                    f"--sprt tests one bot against another: give 2 bots, not {len(self.bots)}"
                )
            self.sprt.check()
        if len(set(self.bots)) != len(self.bots):
            raise ValueError(f"--bots names a bot twice: {','.join(self.bots)}")
        if not set(self.remote) <= set(self.bots):
            raise ValueError(f"the remote bots {','.join(self.remote)} are not all bots")
        if self.time_control is not None:
            if not self.remote:
                raise ValueError("time controls are kept by the service: give --remote bots")
            try:
                self.time_control.check(self.seats)
            except BadArgument as e:
                raise ValueError(str(e)) from None
        if not 2 <= self.seats <= 4:
            raise ValueError(f"--seats must be 2, 3 or 4, not {self.seats}")
        if not 1 <= self.deals <= DEALS_MAX:
            raise ValueError(f"--deals must be 1 to {DEALS_MAX:,}, not {self.deals}")
        for seated in rotations(self.bots, self.seats):
            for bot in seated:
                sides = {team_of(s, self.seats) for s, name in enumerate(seated) if name == bot}
                if len(sides) > 1:
                    raise ValueError(
                        f"{len(self.bots)} bots at {self.seats} seats would seat {bot} on two "
                        "sides of one match: give "
                        + ("2 or 4 bots (partnerships)" if self.seats == 4 else "at least 3 bots")
                    )

    @property
    def id(self) -> str:
        """A sequential test is part of the id (its deals are a prefix of the committed
        ones: a run of the same deals without it, or with another test, is another
        tournament, with its own commitment); a tournament without one keeps the id it had
        before tests existed. Remote bots are too: the service's matches are not these."""
        settings: dict[str, Any] = {
            "bots": list(self.bots),
            "seats": self.seats,
            "deals": self.deals,
            "seed": self.seed,
            "variant": self.variant,
            "round_limit": self.round_limit,
            "target": self.target,
        }
        if self.sprt is not None:
            settings["sprt"] = self.sprt.to_json()
        if self.remote:  # through an arena: the service's matches, not these in process
            settings["remote"] = list(self.remote)
        if self.time_control is not None:
            settings["time_control"] = self.time_control.detail()
        return tournament_id(settings)


@dataclass(frozen=True, slots=True)
class SeedsCommitment:
    """The deal seeds a tournament binds itself to before it plays, and the salt that hides
    them until it reveals it (docs/dealing.md)."""

    salt: bytes
    seeds: tuple[int, ...]

    @classmethod
    def new(cls, settings: Settings) -> SeedsCommitment:
        """The seeds of the tournament's deals, in order, with a new random salt."""
        seeds = tuple(match_seed(settings.seed, d) for d in range(settings.deals))
        return cls(secrets.token_bytes(TOURNAMENT_SALT_SIZE), seeds)

    @property
    def commitment(self) -> bytes:
        return tournament_seeds_commitment(self.salt, self.seeds)

    def to_json(self) -> dict[str, Any]:
        """The commitment and what opens it; seeds as decimal strings, which a reader whose
        numbers are doubles reads exactly."""
        return {
            "commitment": self.commitment.hex(),
            "salt": self.salt.hex(),
            "seeds": [str(s) for s in self.seeds],
        }


@dataclass(frozen=True, slots=True)
class Played:
    """One match of the tournament."""

    deal: int
    rotation: int
    match_id: str
    players: tuple[str, ...]
    teams: tuple[int, ...]
    scores: tuple[int, ...]
    """Final score of each seat's side."""
    rounds: int
    actions: int
    pars: tuple[RoundPar, ...] = ()
    """Each round that is one position in every rotation of the deal, against its par
    (only when the tournament measures pars)."""

    def net(self, seat: int) -> float:
        """The seat's side's final score minus the mean of the other sides' scores."""
        own = self.teams[seat]
        others = [self.scores[s] for s in _side_seats(self.teams) if self.teams[s] != own]
        return self.scores[seat] - sum(others) / len(others)


def _side_seats(teams: Sequence[int]) -> list[int]:
    """One seat of each side."""
    first: dict[int, int] = {}
    for seat, team in enumerate(teams):
        first.setdefault(team, seat)
    return list(first.values())


def play_deal(
    settings: Settings, deal: int, committed: SeedsCommitment, par_nodes: int | None = None
) -> tuple[list[Played], list[EventRow]]:
    """Every rotation of one deal, played and logged under the tournament's commitment;
    with `par_nodes`, its shared rounds solved double-dummy within that budget."""
    tid = settings.id
    seed = committed.seeds[deal]
    commitment = committed.commitment.hex()
    played: list[Played] = []
    rows: list[EventRow] = []
    matches = []
    for r, seated in enumerate(rotations(settings.bots, settings.seats)):
        match_id = f"{tid}-d{deal}-r{r}"
        recorder = EventRecorder(
            match_id,
            settings.seats,
            seed=seed,
            target=settings.target,
            variant=settings.variant,
            round_limit=settings.round_limit,
            source="simulated",
            run_id=tid,
            players=list(seated),
            tournament_commitment=commitment,
            tournament_deals=len(committed.seeds),
            tournament_deal=deal,
            ended={"tournament_salt": committed.salt.hex()},
        )
        bots = [make_bot(name, rotation_bot_seed(seed, r, s)) for s, name in enumerate(seated)]
        play_bots(recorder, bots)
        match = recorder.match
        matches.append(match)
        played.append(
            Played(
                deal,
                r,
                match_id,
                seated,
                match.teams,
                match.seat_scores(),
                len(match.history),
                match.move_count,
            )
        )
        rows += recorder.rows()
    if par_nodes is not None:
        pars = deal_pars(matches, [p.match_id for p in played], par_nodes)
        played = [replace(p, pars=rp) for p, rp in zip(played, pars, strict=True)]
    return played, rows


def _play_chunk(
    job: tuple[Settings, SeedsCommitment, list[int], int | None],
) -> tuple[list[list[Played]], pa.Table, list[int]]:
    """Each deal's matches, all their events in deal order, and how many events each deal
    has (so that the events of the deals after a test's decision can be cut off)."""
    settings, committed, deals, par_nodes = job
    played: list[list[Played]] = []
    rows: list[EventRow] = []
    sizes: list[int] = []
    for deal in deals:
        p, r = play_deal(settings, deal, committed, par_nodes)
        played.append(p)
        rows += r
        sizes.append(len(r))
    return played, rows_to_arrow(rows), sizes


def deal_score(matches: Sequence[Played], bots: Sequence[str]) -> float:
    """A deal's score for the first of two bots: its mean over the deal's matches of 1 a
    win (its side scored more), 0.5 a tie, 0 a loss."""
    return statistics.fmean(s for i, _, s in pair_results(matches, bots) if i == 0)


def play(
    settings: Settings,
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    committed: SeedsCommitment | None = None,
    ray_address: str | None = None,
    par_nodes: int | None = None,
    watch: Callable[[Sequence[Played]], None] | None = None,
) -> tuple[list[Played], pa.Table]:
    """Every match of the tournament, in deal then rotation order, and their events, logged
    under `committed` (a new commitment when none is given: the caller who publishes it
    before play makes it first). With a sequential test, only the deals up to the one that
    decides it: the test is updated in deal order as the deals come back in order, so the
    stopping deal does not depend on the workers. With `par_nodes`, each match carries its
    shared rounds against their par. `watch` gets every match so far as deals come back."""
    settings.check()
    committed = committed or SeedsCommitment.new(settings)
    if len(committed.seeds) != settings.deals:
        raise ValueError(f"the commitment holds {len(committed.seeds)} seeds, not {settings.deals}")
    size = 1 if SEARCH_BOTS & set(settings.bots) or par_nodes is not None else 8
    jobs = (
        (settings, committed, chunk, par_nodes) for chunk in chunked(range(settings.deals), size)
    )
    test = None if settings.sprt is None else Sequential(settings.sprt)
    played: list[Played] = []
    tables: list[pa.Table] = []
    results = ordered_map(_play_chunk, jobs, workers, preload=(__name__,), ray_address=ray_address)
    try:
        for deals, table, sizes in results:
            kept = len(deals)
            if test is not None:
                for x, matches in enumerate(deals):
                    if test.add(deal_score(matches, settings.bots)) is not None:
                        kept = x + 1
                        break
            for matches in deals[:kept]:
                played += matches
                if watch is not None:  # deal by deal, though they come back by chunks
                    watch(played)
            tables.append(table.slice(0, sum(sizes[:kept])))
            if progress is not None:
                progress(sum(len(m) for m in deals[:kept]))
            if test is not None and test.decision is not None:
                break
    finally:
        results.close()  # a decided test: the chunks still queued are cancelled
    return played, pa.concat_tables(tables) if tables else rows_to_arrow([])


# -- statistics -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean over deals, its standard error and 95% Student t interval."""

    n: int
    mean: float
    se: float
    low: float
    high: float


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean of independent values (one a deal), with the t interval on n - 1 df."""
    n = len(values)
    if n == 0:
        return Interval(0, math.nan, math.nan, math.nan, math.nan)
    mean = statistics.fmean(values)
    if n == 1:
        return Interval(1, mean, math.nan, math.nan, math.nan)
    se = statistics.stdev(values) / math.sqrt(n)
    half = t975(n - 1) * se
    return Interval(n, mean, se, mean - half, mean + half)


def _by_deal(played: Sequence[Played]) -> dict[int, list[Played]]:
    out: dict[int, list[Played]] = {}
    for p in played:
        out.setdefault(p.deal, []).append(p)
    return out


def bot_values(
    matches: Sequence[Played], bot: str, net: Callable[[Played, int], float] = Played.net
) -> float | None:
    """One deal's value for `bot`: its mean net result over the rotations it plays (`net` of
    each of its seats: the result itself, or as adjusted, analysis/tournament_luck.py)."""
    per_match = [
        statistics.fmean(net(m, s) for s, name in enumerate(m.players) if name == bot)
        for m in matches
        if bot in m.players
    ]
    return statistics.fmean(per_match) if per_match else None


def _final_score(match: Played, seat: int) -> float:
    return match.scores[seat]


def margin_values(
    matches: Sequence[Played],
    a: str,
    b: str,
    score_of: Callable[[Played, int], float] = _final_score,
) -> float | None:
    """One deal's margin of `a` over `b`: a's side's score minus b's, over the matches where
    they sit on opposing sides (`score_of` a seat: its side's final score, or as adjusted,
    the same for partners)."""
    margins = []
    for m in matches:
        sides_a = {m.teams[s] for s, name in enumerate(m.players) if name == a}
        sides_b = {m.teams[s] for s, name in enumerate(m.players) if name == b}
        if sides_a and sides_b and not sides_a & sides_b:
            score = {m.teams[s]: score_of(m, s) for s in range(len(m.teams))}
            margins.append(
                statistics.fmean(score[t] for t in sides_a)
                - statistics.fmean(score[t] for t in sides_b)
            )
    return statistics.fmean(margins) if margins else None


def pair_results(matches: Sequence[Played], bots: Sequence[str]) -> list[tuple[int, int, float]]:
    """(i, j, score of bot i) for each match and each pair of bots on opposing sides (once
    per pair of sides: partners playing one bot count once): 1 a win for i's side, 0 a
    loss, 0.5 a tie."""
    index = {b: i for i, b in enumerate(bots)}
    out = []
    for m in matches:
        seats = sorted(range(len(m.players)), key=lambda s: (index[m.players[s]], s))
        seen = set()
        for x, s in enumerate(seats):
            for t in seats[x + 1 :]:
                a, b = m.players[s], m.players[t]
                key = (a, b, m.teams[s], m.teams[t])
                if a == b or m.teams[s] == m.teams[t] or key in seen:
                    continue
                seen.add(key)
                sa, sb = m.scores[s], m.scores[t]
                out.append((index[a], index[b], 1.0 if sa > sb else 0.0 if sa < sb else 0.5))
    return out


def bradley_terry(
    results: Sequence[tuple[int, int, float]], k: int, iterations: int = 500
) -> list[float]:
    """Elo-scale ratings (400 log10 of the Bradley-Terry strengths, mean 0) of k players
    from (i, j, score of i) results, with one virtual tie between every pair."""
    wins = [0.0] * k
    games = [[0.0] * k for _ in range(k)]
    for i, j, s in results:
        wins[i] += s
        wins[j] += 1.0 - s
        games[i][j] += 1.0
        games[j][i] += 1.0
    for i in range(k):
        for j in range(k):
            if i != j:
                wins[i] += 0.5
                games[i][j] += 1.0
    p = [1.0] * k
    for _ in range(iterations):
        new = []
        for i in range(k):
            den = sum(games[i][j] / (p[i] + p[j]) for j in range(k) if j != i)
            new.append(wins[i] / den if den > 0 else p[i])
        scale = math.exp(statistics.fmean(math.log(x) for x in new))
        new = [x / scale for x in new]
        done = max(abs(math.log(a / b)) for a, b in zip(new, p, strict=True)) < 1e-10
        p = new
        if done:
            break
    return [400.0 * math.log10(x) for x in p]


@dataclass(slots=True)
class Report:
    settings: Settings
    matches: int
    deals: int
    """Deals played: `settings.deals`, or fewer when a sequential test stopped early."""
    bots: list[dict[str, Any]] = field(default_factory=list)
    head_to_head: list[dict[str, Any]] = field(default_factory=list)
    committed: SeedsCommitment | None = None
    """The commitment to the deal seeds, revealed here (and in the log)."""
    sprt: SprtOutcome | None = None
    par: dict[str, Any] | None = None
    """Each bot against par (`results`, with `unsolved_rounds` and `unsolved_deals`) and
    every deal's pars (`deals`), when measured."""

    def to_json(self) -> dict[str, Any]:
        s = self.settings
        doc = {
            "tournament": s.id,
            "bots": list(s.bots),
            "seats": s.seats,
            "deals": self.deals,
            "deals_max": s.deals,
            "rotations": len(s.bots),
            "matches": self.matches,
            "seed": s.seed,
            "variant": s.variant,
            "round_limit": s.round_limit,
            "target": s.target,
            "results": self.bots,
            "head_to_head": self.head_to_head,
            "seed_commitment": None if self.committed is None else self.committed.to_json(),
        }
        if self.sprt is not None:
            doc["sprt"] = self.sprt.to_json()
        if self.par is not None:
            doc["par"] = self.par
        return doc


def _interval_json(iv: Interval) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return None if math.isnan(x) else round(x, 4)

    return {
        "deals": iv.n,
        "mean": num(iv.mean),
        "se": num(iv.se),
        "ci_low": num(iv.low),
        "ci_high": num(iv.high),
    }


def report(
    settings: Settings, played: Sequence[Played], committed: SeedsCommitment | None = None
) -> Report:
    """Per-bot net results, head-to-head margins and ratings, all clustered by deal; and the
    reveal of `committed`."""
    bots = settings.bots
    deals = _by_deal(played)
    keys = sorted(deals)
    ratings = bradley_terry(pair_results(played, bots), len(bots))
    rng = random.Random(settings.seed)
    boot: list[list[float]] = [[] for _ in bots]
    pairs_by_deal = {d: pair_results(deals[d], bots) for d in keys}
    for _ in range(BOOTSTRAP if len(keys) > 1 else 0):
        sample = [pairs_by_deal[rng.choice(keys)] for _ in keys]
        fitted = bradley_terry([r for pairs in sample for r in pairs], len(bots), 200)
        for i, x in enumerate(fitted):
            boot[i].append(x)
    out = Report(settings, len(played), len(keys), committed=committed)
    if settings.sprt is not None:
        out.sprt = run_sprt(settings.sprt, [deal_score(deals[d], bots) for d in keys])
    if any(p.pars for p in played):
        out.par = _par_report(bots, deals)
    for i, bot in enumerate(bots):
        values = [v for d in keys if (v := bot_values(deals[d], bot)) is not None]
        row: dict[str, Any] = {"bot": bot, **_interval_json(mean_interval(values))}
        row["matches"] = sum(1 for p in played if bot in p.players)
        row["rating"] = round(ratings[i], 1)
        if boot[i]:
            ordered = sorted(boot[i])
            row["rating_low"] = round(ordered[int(0.025 * (len(ordered) - 1))], 1)
            row["rating_high"] = round(ordered[math.ceil(0.975 * (len(ordered) - 1))], 1)
        else:
            row["rating_low"] = row["rating_high"] = None
        out.bots.append(row)
    for x, a in enumerate(bots):
        for b in bots[x + 1 :]:
            values = [v for d in keys if (v := margin_values(deals[d], a, b)) is not None]
            if values:
                out.head_to_head.append(
                    {"bot": a, "opponent": b, **_interval_json(mean_interval(values))}
                )
    return out


def standings(settings: Settings, played: Sequence[Played]) -> list[dict[str, Any]]:
    """Each bot's mean net result so far (95% interval by deal) and rating, without the
    rating's bootstrap: cheap enough to show after every deal, best first."""
    deals = _by_deal(played)
    ratings = bradley_terry(pair_results(played, settings.bots), len(settings.bots))
    rows = []
    for i, bot in enumerate(settings.bots):
        values = [v for d in sorted(deals) if (v := bot_values(deals[d], bot)) is not None]
        row: dict[str, Any] = {"bot": bot, **_interval_json(mean_interval(values))}
        row["rating"] = round(ratings[i], 1)
        rows.append(row)
    return sorted(rows, key=lambda r: -r["rating"])


def _par_report(bots: Sequence[str], deals: dict[int, list[Played]]) -> dict[str, Any]:
    """Each bot's mean result against par, by deal, and every deal's pars."""
    by_deal = {d: [(p.players, p.pars) for p in matches] for d, matches in sorted(deals.items())}
    results = []
    for bot in bots:
        values = [v for rots in by_deal.values() if (v := bot_against_par(rots, bot)) is not None]
        results.append({"bot": bot, **_interval_json(mean_interval(values))})
    return {
        "results": results,
        "rounds": sum(len(rots[0][1]) for rots in by_deal.values()),
        "unsolved_rounds": sum(unsolved(rots) for rots in by_deal.values()),
        "unsolved_deals": sum(
            1 for rots in by_deal.values() if all(not rp.solved for rp in rots[0][1])
        ),
        "deals": [deal_json(d, rots, bots) for d, rots in by_deal.items()],
    }
