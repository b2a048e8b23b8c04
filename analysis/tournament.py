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

Before its first deal a tournament commits to the seeds of all its deals
(`SeedsCommitment`, sniff/seeds.py's `tournament_seeds_commitment`): each
match logs the commitment and its deal's index in its match_created detail,
and the salt that opens it in its match_ended detail, where the chain covers
them; `sniff audit --db` opens it again (docs/dealing.md).

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
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from analysis.bot_matches import play_bots
from analysis.parallel import chunked, ordered_map
from analysis.stats.tdist import t975
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

    def check(self) -> None:
        """ValueError for a tournament that cannot be played."""
        if len(self.bots) < 2:
            raise ValueError("a tournament needs at least 2 bots, like --bots rollout,greedy")
        if len(set(self.bots)) != len(self.bots):
            raise ValueError(f"--bots names a bot twice: {','.join(self.bots)}")
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
        return tournament_id(
            {
                "bots": list(self.bots),
                "seats": self.seats,
                "deals": self.deals,
                "seed": self.seed,
                "variant": self.variant,
                "round_limit": self.round_limit,
                "target": self.target,
            }
        )


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
    settings: Settings, deal: int, committed: SeedsCommitment
) -> tuple[list[Played], list[EventRow]]:
    """Every rotation of one deal, played and logged under the tournament's commitment."""
    tid = settings.id
    seed = committed.seeds[deal]
    commitment = committed.commitment.hex()
    played: list[Played] = []
    rows: list[EventRow] = []
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
            tournament_deal=deal,
            ended={"tournament_salt": committed.salt.hex()},
        )
        bots = [make_bot(name, rotation_bot_seed(seed, r, s)) for s, name in enumerate(seated)]
        play_bots(recorder, bots)
        match = recorder.match
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
    return played, rows


def _play_chunk(
    job: tuple[Settings, SeedsCommitment, list[int]],
) -> tuple[list[Played], pa.Table]:
    settings, committed, deals = job
    played: list[Played] = []
    rows: list[EventRow] = []
    for deal in deals:
        p, r = play_deal(settings, deal, committed)
        played += p
        rows += r
    return played, rows_to_arrow(rows)


def play(
    settings: Settings,
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    committed: SeedsCommitment | None = None,
    ray_address: str | None = None,
) -> tuple[list[Played], pa.Table]:
    """Every match of the tournament, in deal then rotation order, and their events, logged
    under `committed` (a new commitment when none is given: the caller who publishes it
    before play makes it first)."""
    settings.check()
    committed = committed or SeedsCommitment.new(settings)
    if len(committed.seeds) != settings.deals:
        raise ValueError(f"the commitment holds {len(committed.seeds)} seeds, not {settings.deals}")
    size = 1 if SEARCH_BOTS & set(settings.bots) else 8
    jobs = ((settings, committed, chunk) for chunk in chunked(range(settings.deals), size))
    played: list[Played] = []
    tables: list[pa.Table] = []
    for p, table in ordered_map(
        _play_chunk, jobs, workers, preload=(__name__,), ray_address=ray_address
    ):
        played += p
        tables.append(table)
        if progress is not None:
            progress(len(p))
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


def bot_values(matches: Sequence[Played], bot: str) -> float | None:
    """One deal's value for `bot`: its mean net result over the rotations it plays."""
    per_match = [
        statistics.fmean(m.net(s) for s, name in enumerate(m.players) if name == bot)
        for m in matches
        if bot in m.players
    ]
    return statistics.fmean(per_match) if per_match else None


def margin_values(matches: Sequence[Played], a: str, b: str) -> float | None:
    """One deal's margin of `a` over `b`: a's side's score minus b's, over the matches where
    they sit on opposing sides."""
    margins = []
    for m in matches:
        sides_a = {m.teams[s] for s, name in enumerate(m.players) if name == a}
        sides_b = {m.teams[s] for s, name in enumerate(m.players) if name == b}
        if sides_a and sides_b and not sides_a & sides_b:
            score = {m.teams[s]: m.scores[s] for s in range(len(m.teams))}
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
    bots: list[dict[str, Any]] = field(default_factory=list)
    head_to_head: list[dict[str, Any]] = field(default_factory=list)
    committed: SeedsCommitment | None = None
    """The commitment to the deal seeds, revealed here (and in the log)."""

    def to_json(self) -> dict[str, Any]:
        s = self.settings
        return {
            "tournament": s.id,
            "bots": list(s.bots),
            "seats": s.seats,
            "deals": s.deals,
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
    out = Report(settings, len(played), committed=committed)
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
