"""Luck of a whole match: every chance event's change to the equity of the side it happens to.

docs/analysis.md ("Luck") defines it; in short, per round:

* the **lot** (when the rules choose the leader by lot: the first round, and
  after a blocked round), for every side: the equity of the round before the
  deal with the leader the lot chose, minus its mean over every leader the lot
  could have chosen (`sniff.luck.deal_values`, from nobody's view);
* the **deal**, for every seat: the equity of the round from the seat's view
  once it holds its hand, minus the equity before the deal with that leader;
* each **draw** from the boneyard, for the seat that draws: the equity from
  its view once it sees the tile, minus the equity just before the draw.

A side's luck in a round sums the luck of the events that happened to it (its
lot, each of its seats' deal and draws); a seat's **net luck** is its side's
luck minus the mean of the other sides' (as a round's value is its gain minus
the mean of the others'), so one side's good draw is the others' bad luck.
The **luck-adjusted result** is the round's (or match's) actual net result
minus the net luck. Every equity is estimated by rollouts, so each figure
carries a standard error (`sniff.luck.combined_se`: rollout sets are
independent, the sides of one set are not).

Reproducible from the seed whatever the number of workers: each estimate is
seeded by a hash of (seed, match, round, point, seat) (`seeds.luck_seed`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from analysis.rollout.source import MatchSpec
from sniff import Deal, Move, view
from sniff.luck import Values, combined_se, deal_values, position_values
from sniff.match import LeaderChoice, Phase
from sniff.moves import MoveKind
from sniff.rules import team_count, value_for_side
from sniff.seeds import luck_seed
from sniff.tiles import Tile
from sniff.variants import variant_named

DEFAULT_ROLLOUTS: Final = 400
"""Rollouts per estimate: one playout each (no candidate moves), so four times a decision's
default per move costs about what one decision of three moves does."""
PRIOR_POINT: Final = -1
"""The point (actions played in the round) of the estimates made before the deal."""

Term = tuple[Values, int, float]


@dataclass(frozen=True, slots=True)
class LuckSettings:
    rollouts: int = DEFAULT_ROLLOUTS
    policy: str = "greedy"
    seed: int = 0

    @property
    def tag(self) -> str:
        """The settings as a file name part, as a decision analysis's are named:
        `rollouts-400_greedy_seed-0`."""
        return f"rollouts-{self.rollouts}_{self.policy}_seed-{self.seed}"


@dataclass(frozen=True, slots=True)
class LuckEvent:
    """One chance event's luck for one seat's side."""

    match_id: str
    round: int
    action: int
    """The action's index within its round (a draw); -1 for the lot and the deal."""
    seat: int
    player: str
    kind: str
    """`lot`, `deal` or `draw`."""
    tile: str
    """The tile drawn (a draw), else empty."""
    before: float
    """The side's equity before the event (for the lot: its mean over the possible leaders)."""
    after: float
    luck: float
    se: float

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in EVENT_COLUMNS}


EVENT_COLUMNS: Final = (
    "match_id",
    "round",
    "action",
    "seat",
    "player",
    "kind",
    "tile",
    "before",
    "after",
    "luck",
    "se",
)


@dataclass(frozen=True, slots=True)
class SeatLuck:
    """One seat's luck over one round (`round` >= 0) or the whole match (`round` = -1)."""

    match_id: str
    round: int
    seat: int
    player: str
    prior: float
    """The side's equity before the deal, with the leader the round had (over a match: the
    sum over its rounds)."""
    own: float
    """The luck of the events that happened to the seat's side (lot, deals and draws)."""
    net: float
    """Its side's luck minus the mean of the other sides'."""
    net_se: float
    result: float
    """The actual net result for the seat's side: its gain minus the mean of the others'."""

    @property
    def adjusted(self) -> float:
        """The luck-adjusted result: the result minus the net luck (same standard error)."""
        return self.result - self.net

    @property
    def rest(self) -> float:
        """What neither the prior nor luck accounts for: the decisions of every seat and what
        they revealed (docs/analysis.md, "Luck"); its mean is 0 when every seat plays as the
        rollouts do."""
        return self.result - self.prior - self.net

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in SEAT_COLUMNS if k not in ("adjusted", "rest")}
        out["adjusted"] = self.adjusted
        out["rest"] = self.rest
        return out


SEAT_COLUMNS: Final = (
    "match_id",
    "round",
    "seat",
    "player",
    "prior",
    "own",
    "net",
    "net_se",
    "result",
    "adjusted",
    "rest",
)


@dataclass(frozen=True, slots=True)
class MatchLuck:
    match_id: str
    events: tuple[LuckEvent, ...]
    rounds: tuple[SeatLuck, ...]
    """Per round, per seat."""
    totals: tuple[SeatLuck, ...]
    """Per seat, over the match."""


class _Estimates:
    """The match's estimates, made once each and shared by the events that need them (the
    equity after one draw is the equity before the next)."""

    def __init__(self, spec: MatchSpec, settings: LuckSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.made: dict[tuple[int, int, int], Values] = {}

    def seed(self, round_index: int, point: int, seat: int) -> int:
        return luck_seed(self.settings.seed, self.spec.match_id, round_index, point, seat)

    def position(self, round_index: int, point: int, match: Any, seat: int) -> Values:
        """The equity from `seat`'s view of `match` after `point` actions of the round (made
        once: a later call for the same point returns the first estimate)."""
        key = (round_index, point, seat)
        if key not in self.made:
            self.made[key] = position_values(
                view(match, seat),
                rollouts=self.settings.rollouts,
                policy=self.settings.policy,
                seed=self.seed(round_index, point, seat),
            )
        return self.made[key]

    def prior(self, round_index: int, match: Any, leader: int) -> Values:
        spec = self.spec
        return deal_values(
            variant_named(spec.variant),
            spec.seats,
            spec.target,
            tuple(match.scores),
            leader,
            rollouts=self.settings.rollouts,
            policy=self.settings.policy,
            seed=self.seed(round_index, PRIOR_POINT, leader),
        )


def _mean(terms: Sequence[Term]) -> float:
    return math.fsum(c * v.mean(s) for v, s, c in terms)


def match_luck(spec: MatchSpec, settings: LuckSettings) -> MatchLuck:
    """The luck of every chance event of the match, and per seat per round and in total."""
    estimates = _Estimates(spec, settings)
    match = spec.rebuild()
    seats = spec.seats
    sides = team_count(seats)
    events: list[LuckEvent] = []
    rounds: list[SeatLuck] = []
    match_terms: list[list[Term]] = [[] for _ in range(seats)]
    match_own = [0.0] * seats
    match_prior = [0.0] * seats
    match_result = [0.0] * seats
    for index, rnd in enumerate(spec.rounds):
        teams = match.teams
        before_scores = tuple(match.scores)
        by_lot = match.next_leader is None
        priors = [
            estimates.prior(index, match, leader) if by_lot or leader == rnd.leader else None
            for leader in range(seats)
        ]
        prior = priors[rnd.leader]
        assert prior is not None
        side_terms: list[list[Term]] = [[] for _ in range(sides)]
        match.deal(Deal.of(rnd.hands, rnd.boneyard, rnd.leader))
        assert by_lot == (match.history[-1].leader_choice is not LeaderChoice.FINISHER)
        if by_lot:
            for side in range(sides):
                terms: list[Term] = [(prior, side, 1.0)]
                terms += [(p, side, -1.0 / seats) for p in priors if p is not None]
                side_terms[side] += terms
                for seat in range(seats):
                    if teams[seat] == side:
                        events.append(
                            _event(spec, index, -1, seat, "lot", "", terms, prior.mean(side))
                        )
        for seat in range(seats):
            side = teams[seat]
            terms = [(estimates.position(index, 0, match, seat), side, 1.0), (prior, side, -1.0)]
            side_terms[side] += terms
            events.append(_event(spec, index, -1, seat, "deal", "", terms, prior.mean(side)))
        for k, text in enumerate(rnd.actions):
            move = Move.parse(text)
            mover = match.turn
            if move.kind is MoveKind.DRAW:
                side = teams[mover]
                before = estimates.position(index, k, match, mover)
                tile = match.boneyard[match.bone_pos]
                match.apply(move)
                if match.phase is Phase.PLAYING and match.round_index == index:
                    after = estimates.position(index, k + 1, match, mover)
                else:  # the draw blocked the round: its result is known
                    after = Values.known(_round_values(match.scores, before_scores))
                terms = [(after, side, 1.0), (before, side, -1.0)]
                side_terms[side] += terms
                events.append(
                    _event(spec, index, k, mover, "draw", str(Tile(tile)), terms, before.mean(side))
                )
            else:
                match.apply(move)
        results = _round_values(match.scores, before_scores)
        for seat in range(seats):
            side = teams[seat]
            net = _net_terms(side_terms, side)
            result = results[side]
            own = _mean(side_terms[side])
            rounds.append(
                SeatLuck(
                    spec.match_id,
                    index,
                    seat,
                    spec.player(seat),
                    prior.mean(side),
                    own,
                    _mean(net),
                    combined_se(net),
                    result,
                )
            )
            match_terms[seat] += net
            match_own[seat] += own
            match_prior[seat] += rounds[-1].prior
            match_result[seat] += result
    totals = tuple(
        SeatLuck(
            spec.match_id,
            -1,
            seat,
            spec.player(seat),
            match_prior[seat],
            match_own[seat],
            _mean(match_terms[seat]),
            combined_se(match_terms[seat]),
            match_result[seat],
        )
        for seat in range(seats)
    )
    return MatchLuck(spec.match_id, tuple(events), tuple(rounds), totals)


def _round_values(scores: Sequence[int], before: Sequence[int]) -> list[float]:
    """Per side, the round's value: its gain minus the mean of the other sides'."""
    gains = [a - b for a, b in zip(scores, before, strict=True)]
    return [value_for_side(gains, side) for side in range(len(gains))]


def _net_terms(side_terms: Sequence[Sequence[Term]], side: int) -> list[Term]:
    others = len(side_terms) - 1
    out: list[Term] = []
    for s, terms in enumerate(side_terms):
        weight = 1.0 if s == side else -1.0 / others
        out += [(v, vs, c * weight) for v, vs, c in terms]
    return out


def _event(
    spec: MatchSpec,
    round_index: int,
    action: int,
    seat: int,
    kind: str,
    tile: str,
    terms: Sequence[Term],
    before: float,
) -> LuckEvent:
    luck = _mean(terms)
    return LuckEvent(
        spec.match_id,
        round_index,
        action,
        seat,
        spec.player(seat),
        kind,
        tile,
        before,
        before + luck,
        luck,
        combined_se(terms),
    )


def luck_of(job: tuple[MatchSpec, LuckSettings]) -> MatchLuck:
    """`match_luck` of one job, for a worker pool."""
    return match_luck(*job)


def analyse_luck(
    specs: Sequence[MatchSpec],
    settings: LuckSettings,
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> list[MatchLuck]:
    """`match_luck` of every match, a match a job, in match order."""
    from analysis.parallel import ordered_map

    out = []
    for result in ordered_map(
        luck_of,
        [(spec, settings) for spec in specs],
        min(workers, max(1, len(specs))),
        ("analysis.rollout.luck",),
        ray_address=ray_address,
    ):
        out.append(result)
        if progress is not None:
            progress(1)
    return out


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat of one match: its result split into luck and the equity its decisions lost."""

    match_id: str
    seat: int
    player: str
    result: float
    luck: float
    """Net luck (`SeatLuck.net`) over the match."""
    luck_se: float
    lost: float
    """Equity lost by the seat's own decisions (the analysis's losses), None-free: 0 when the
    seat's decisions were not analysed."""
    lost_se: float
    decisions: int
    """The seat's decisions the losses come from (0 when only other seats were analysed)."""

    @property
    def adjusted(self) -> float:
        return self.result - self.luck

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ROW_COLUMNS if k != "adjusted"}
        out["adjusted"] = self.adjusted
        out["adjusted_se"] = self.luck_se
        return out


ROW_COLUMNS: Final = (
    "match_id",
    "seat",
    "player",
    "result",
    "luck",
    "luck_se",
    "lost",
    "lost_se",
    "decisions",
    "adjusted",
)


def luck_rows(
    lucks: Sequence[MatchLuck], decisions: Sequence[Any], seat: int | None
) -> list[SeatRow]:
    """Per match and seat (of `seat` only, if given): result, net luck, the equity its
    analysed decisions lost (`DecisionResult`s), and the luck-adjusted result."""
    lost: dict[tuple[str, int], list[Any]] = {}
    for d in decisions:
        lost.setdefault((d.match_id, d.seat), []).append(d)
    rows = []
    for m in lucks:
        for total in m.totals:
            if seat is not None and total.seat != seat:
                continue
            mine = lost.get((m.match_id, total.seat), [])
            rows.append(
                SeatRow(
                    m.match_id,
                    total.seat,
                    total.player,
                    total.result,
                    total.net,
                    total.net_se,
                    math.fsum(d.loss for d in mine),
                    math.sqrt(math.fsum(d.loss_se**2 for d in mine)),
                    len(mine),
                )
            )
    return rows
