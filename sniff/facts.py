"""The facts of a played match that the Sniff-timing statistics need (docs/statistics.md §1, §3).

Some facts need the rules: whether the mover could have placed a double at a
turn, whether only doubles could be placed (a forced turn, not a decision),
and what the Sniff counted inside a scored sum. They are computed here, once,
by replaying the match's deals and actions through the engine; the
statistics themselves are SQL aggregates over the rows `facts_rows` makes
(`analysis/stats/`), so no statistic re-implements a rule.

Only complete rounds (ended by a domino or a block, the round limit's last
round included) carry a net result and Sniff decisions: the round in which
the match was won at a placement, or a round still in play, is listed with
`complete` false and is left out of every statistic (docs/statistics.md, Words).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from sniff.match import Match, Phase, RoundLog
from sniff.moves import Move, Side
from sniff.rules import Seat, value_for_side
from sniff.tiles import BIT, IS_DOUBLE, LOW, SET_SIZE

PLAYED: Final = "played"
HELD_SELF: Final = "held_self"
HELD_PARTNER: Final = "held_partner"
HELD_OTHER: Final = "held_other"
HELD_NEVER: Final = "held_never"
OUTCOMES: Final = (PLAYED, HELD_SELF, HELD_PARTNER, HELD_OTHER, HELD_NEVER)
"""The outcomes of a Sniff decision (docs/statistics.md §3), in report order."""

SOURCES: Final = ("served", "imported", "simulated")
"""Where a match came from: played through the service, imported from records, simulated."""

_LINES: Final = (1 << Side.LINE_A) | (1 << Side.LINE_B)
_PLAYING: Final = Phase.PLAYING  # a constant: reading `Phase.PLAYING` costs ~100 ns in 3.11
_DOUBLES: Final = sum(BIT[t] for t in range(SET_SIZE) if IS_DOUBLE[t])
"""The doubles as a bitmask; the higher a double's bit, the higher the double."""


@dataclass(frozen=True, slots=True)
class SniffDecision:
    """A turn before the round's Sniff at which the mover could place a double or a non-double.

    `placement_index` is the index the mover's placement got (its timing bucket);
    `double` is the highest double the mover could have placed.
    """

    round: int
    seat: Seat
    placement_index: int
    double: int
    outcome: str
    mover_is_leader: bool
    value: float
    """The value of the round for the mover's side (`side_value`)."""
    same_outcome_before: int = 0
    same_outcome_after: int = 0
    """How many decisions of the same round with the same outcome came before and after this
    one: the decisions a clustered interval groups together (most have none)."""

    @property
    def played(self) -> bool:
        return self.outcome == PLAYED


@dataclass(frozen=True, slots=True)
class RoundFacts:
    """One round as the statistics see it; per-seat tuples are indexed by seat.

    `net` is, for each seat, its side's round net result (points scored by the
    side's placements minus the deductions from the side's hands); None for an
    incomplete round, as are `ending` and `deductions`.
    """

    round: int
    leader: Seat
    complete: bool
    maker: Seat | None
    sniff_index: int | None
    double: int | None
    orientation: str | None
    """`cross` or `inline` where the variant lets the player choose, else None."""
    covered_after: int | None
    net: tuple[int, ...] | None
    value: float | None
    """The value of the round for the maker's side, or the leader's without a Sniff."""
    sniff_points: int
    sniff_points_maker_side: int
    sniff_points_others: int
    ending: str | None
    finisher: Seat | None
    points: tuple[int, ...]
    """Per seat: the points that seat's own placements scored in the round."""
    deductions: tuple[int, ...] | None
    placements: tuple[int, ...]
    scoring_placements: tuple[int, ...]
    decisions: tuple[SniffDecision, ...]
    """The round's Sniff decisions, in play order; empty for an incomplete round."""

    @property
    def sniff(self) -> bool:
        return self.maker is not None


@dataclass(frozen=True, slots=True)
class MatchFacts:
    seats: int
    variant: str
    target: int
    round_limit: int | None
    finished: bool
    winner: Seat | None
    """The winning seat (with partners, a seat of the winning side); None unfinished or drawn."""
    first_leader: Seat | None
    scores: tuple[int, ...]
    rounds: tuple[RoundFacts, ...]

    @property
    def incomplete_rounds(self) -> int:
        return sum(1 for r in self.rounds if not r.complete)


def side_value(net: Sequence[int], seat: Seat) -> float:
    """The value of a round for `seat`'s side (docs/statistics.md, The words): its side's net
    result minus the mean net result of the other sides (`rules.value_for_side`). `net` holds each
    seat's side's net result (partners the same)."""
    if len(net) == 4:
        return value_for_side((net[seat], net[(seat + 1) % 4]), 0)
    return value_for_side(net, seat)


class Decision(NamedTuple):
    """A Sniff decision as `RoundRecorder.before` notes it, before its outcome is known."""

    seat: Seat
    placement_index: int
    double: int
    """The highest double the seat may place."""


class RoundRecorder:
    """Follows one round action by action: call `before` ahead of each action and `after`
    with the action's seat, move and points, then `facts` once the round stopped.

    Used by `match_facts` on a replay; a simulation may drive it while it plays, so the
    facts cost no second replay.
    """

    __slots__ = (
        "_pending",
        "covered_after",
        "double",
        "index",
        "leader",
        "maker",
        "orientation",
        "placements",
        "points",
        "round",
        "scoring",
        "seats",
        "sniff_index",
        "sniff_points",
        "sniff_points_maker_side",
        "teams",
    )

    def __init__(self, match: Match) -> None:
        seats = match.seats
        self.seats = seats
        self.teams = match.teams
        self.round = match.round_index
        self.leader = match.leader
        self.index = 0
        self.maker: Seat | None = None
        self.sniff_index: int | None = None
        self.double: int | None = None
        self.orientation: str | None = None
        self.covered_after: int | None = None
        self.sniff_points = 0
        self.sniff_points_maker_side = 0
        self.points = [0] * seats
        self.placements = [0] * seats
        self.scoring = [0] * seats
        self._pending: list[Decision] = []
        """Decisions so far, their outcomes known once the round stopped."""

    def before(self, match: Match) -> Decision | None:
        """Note a Sniff decision if the seat to play, before any Sniff, may place a double
        and a non-double (a forced double, e.g. just drawn, is not a decision); return it,
        for an analysis of the decision in the position it was made in."""
        if self.maker is not None or match.phase is not _PLAYING or match.drawn >= 0:
            return None  # a tile just drawn is the only one that may be placed: no choice
        # The tiles with a legal placement are exactly those of the hand that some target
        # accepts (`legal_moves_of`): no list of moves is needed to tell what they are.
        placeable = match.hands[match.turn] & match.layout.playable
        doubles = placeable & _DOUBLES
        if not doubles or placeable == doubles:
            return None
        decision = Decision(match.turn, self.index, LOW[doubles.bit_length() - 1])
        self._pending.append(decision)
        return decision

    def after(self, match: Match, seat: Seat, move: Move, points: int) -> None:
        """Account for the action `seat` just made (`points` it scored) on `match`'s layout."""
        if not move.is_placement:
            return
        layout = match.layout
        index = self.index
        self.index = index + 1
        self.placements[seat] += 1
        sniff = layout.sniff
        if self.maker is None and sniff >= 0:
            self.maker = seat
            self.sniff_index = index
            self.double = LOW[sniff]
            if match.variant.has_choice and layout.rule is not None:
                self.orientation = layout.rule.orientation.value
        elif (
            self.covered_after is None
            and sniff >= 0
            and layout.covered[sniff] & _LINES == _LINES
            and self.sniff_index is not None
        ):
            self.covered_after = index - self.sniff_index
        if points:
            self.points[seat] += points
            self.scoring[seat] += 1
            if sniff >= 0:
                # The Sniff's share of the scored sum: its counted ends (Layout.counted_ends).
                counted = layout.contribution(sniff)
                self.sniff_points += counted
                assert self.maker is not None
                if self.teams[seat] == self.teams[self.maker]:
                    self.sniff_points_maker_side += counted

    def facts(self, log: RoundLog) -> RoundFacts:
        """The round's facts once it stopped (ended, or cut by the match win)."""
        end = log.end
        seats = self.seats
        teams = self.teams
        net: tuple[int, ...] | None = None
        decisions: tuple[SniffDecision, ...] = ()
        if end is not None:
            side = [0] * (max(teams) + 1)
            for seat in range(seats):
                side[teams[seat]] += self.points[seat] - end.deductions[seat]
            net = tuple(side[teams[s]] for s in range(seats))
            outcomes = [self._outcome(seat, index) for seat, index, _ in self._pending]
            decisions = tuple(
                SniffDecision(
                    self.round,
                    seat,
                    index,
                    double,
                    outcome,
                    seat == self.leader,
                    side_value(net, seat),
                    outcomes[:k].count(outcome),
                    outcomes[k + 1 :].count(outcome),
                )
                for k, ((seat, index, double), outcome) in enumerate(
                    zip(self._pending, outcomes, strict=True)
                )
            )
        return RoundFacts(
            round=self.round,
            leader=self.leader,
            complete=end is not None,
            maker=self.maker,
            sniff_index=self.sniff_index,
            double=self.double,
            orientation=self.orientation,
            covered_after=self.covered_after,
            net=net,
            value=None
            if net is None
            else side_value(net, self.leader if self.maker is None else self.maker),
            sniff_points=self.sniff_points,
            sniff_points_maker_side=self.sniff_points_maker_side,
            sniff_points_others=self.sniff_points - self.sniff_points_maker_side,
            ending=None if end is None else end.kind.value,
            finisher=None if end is None else end.finisher,
            points=tuple(self.points),
            deductions=None if end is None else end.deductions,
            placements=tuple(self.placements),
            scoring_placements=tuple(self.scoring),
            decisions=decisions,
        )

    def _outcome(self, seat: Seat, index: int) -> str:
        maker = self.maker
        if index == self.sniff_index:
            return PLAYED
        if maker is None:
            return HELD_NEVER
        if maker == seat:
            return HELD_SELF
        if self.teams[maker] == self.teams[seat]:
            return HELD_PARTNER
        return HELD_OTHER


def replayed_rounds(
    match: Match, on_decision: Callable[[Match, Decision], None] | None = None
) -> list[RoundFacts]:
    """The facts of every round `match` has played, by replaying its history in the engine
    (on a fresh match with the same settings: `match` is left untouched).

    `on_decision` is called at each Sniff decision with the replay in the position the
    decision was made in (before its move), so an analysis of decisions needs no replay
    of its own; it must leave the replay as it found it.
    """
    replay = Match(
        match.seats,
        target=match.target,
        variant=match.variant,
        round_limit=match.round_limit,
        auto_deal=False,
    )
    rounds = []
    for log in match.history:
        replay.deal(log.deal)
        recorder = RoundRecorder(replay)
        for move in log.actions:
            decision = recorder.before(replay)
            if decision is not None and on_decision is not None:
                on_decision(replay, decision)
            seat = replay.turn
            result = replay.apply(move)
            recorder.after(replay, seat, move, result.points)
        rounds.append(recorder.facts(replay.history[-1]))
    return rounds


def match_facts(match: Match, rounds: Sequence[RoundFacts] | None = None) -> MatchFacts:
    """The facts of `match`: its rounds' (`rounds` when a `RoundRecorder` followed the play,
    else replayed) and how the match stands."""
    if rounds is None:
        rounds = replayed_rounds(match)
    if len(rounds) != len(match.history):
        raise ValueError(f"{len(rounds)} rounds of facts for {len(match.history)} rounds played")
    return MatchFacts(
        seats=match.seats,
        variant=match.variant.name,
        target=match.target,
        round_limit=match.round_limit,
        finished=match.phase is Phase.OVER,
        winner=match.winner,
        first_leader=match.history[0].deal.leader if match.history else None,
        scores=match.seat_scores(),
        rounds=tuple(rounds),
    )


# -- rows for the facts tables (service/storage/facts.sql) ---------------------------------

MATCH_COLUMNS: Final = (
    "match_id",
    "source",
    "run",
    "seats",
    "variant",
    "players",
    "target",
    "round_limit",
    "finished",
    "winner",
    "first_leader",
    "scores",
    "rounds",
    "incomplete_rounds",
)
ROUND_COLUMNS: Final = (
    "match_id",
    "round",
    "seats",
    "variant",
    "complete",
    "leader",
    "sniff",
    "maker",
    "sniff_index",
    "double",
    "orientation",
    "covered_after",
    "net",
    "value",
    "sniff_points",
    "sniff_points_maker_side",
    "sniff_points_others",
    "ending",
    "finisher",
    "points",
    "deductions",
    "placements",
    "scoring_placements",
)
DECISION_COLUMNS: Final = (
    "match_id",
    "round",
    "seats",
    "seat",
    "placement_index",
    "double",
    "outcome",
    "mover_is_leader",
    "value",
    "same_outcome_before",
    "same_outcome_after",
)

Columns = dict[str, list[Any]]
"""A table as column lists, keyed by column name in table order (ready for `pyarrow`)."""


@dataclass(frozen=True, slots=True)
class FactsRows:
    """The rows one match adds to the three facts tables, as column lists."""

    matches: Columns
    rounds: Columns
    decisions: Columns


def empty_columns(names: Sequence[str]) -> Columns:
    return {name: [] for name in names}


def facts_rows(
    match: Match,
    match_id: str,
    players: Sequence[str] | None,
    source: str,
    run: str | None = None,
    out: FactsRows | None = None,
    rounds: Sequence[RoundFacts] | None = None,
) -> FactsRows:
    """The facts-table rows of one match: one match row, one row per round, one per decision.

    `players` names each seat's player (docs/records.md `players`), None when unknown; `source`
    is one of `SOURCES`; `run` the simulation run's id. Rows are appended to `out` when
    given (build a whole batch without concatenating), else to fresh column lists. `rounds`:
    the rounds' facts when a `RoundRecorder` followed the play (no replay needed).
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    if players is not None and len(players) != match.seats:
        raise ValueError(f"{len(players)} players for {match.seats} seats")
    facts = match_facts(match, rounds)
    value: Any
    if out is None:
        out = FactsRows(
            empty_columns(MATCH_COLUMNS),
            empty_columns(ROUND_COLUMNS),
            empty_columns(DECISION_COLUMNS),
        )
    m = out.matches
    for name, value in (
        ("match_id", match_id),
        ("source", source),
        ("run", run),
        ("seats", facts.seats),
        ("variant", facts.variant),
        ("players", None if players is None else list(players)),
        ("target", facts.target),
        ("round_limit", facts.round_limit),
        ("finished", facts.finished),
        ("winner", facts.winner),
        ("first_leader", facts.first_leader),
        ("scores", list(facts.scores)),
        ("rounds", len(facts.rounds)),
        ("incomplete_rounds", facts.incomplete_rounds),
    ):
        m[name].append(value)
    r = out.rounds
    d = out.decisions
    for rf in facts.rounds:
        for name, value in (
            ("match_id", match_id),
            ("round", rf.round),
            ("seats", facts.seats),
            ("variant", facts.variant),
            ("complete", rf.complete),
            ("leader", rf.leader),
            ("sniff", rf.sniff),
            ("maker", rf.maker),
            ("sniff_index", rf.sniff_index),
            ("double", rf.double),
            ("orientation", rf.orientation),
            ("covered_after", rf.covered_after),
            ("net", None if rf.net is None else list(rf.net)),
            ("value", rf.value),
            ("sniff_points", rf.sniff_points),
            ("sniff_points_maker_side", rf.sniff_points_maker_side),
            ("sniff_points_others", rf.sniff_points_others),
            ("ending", rf.ending),
            ("finisher", rf.finisher),
            ("points", list(rf.points)),
            ("deductions", None if rf.deductions is None else list(rf.deductions)),
            ("placements", list(rf.placements)),
            ("scoring_placements", list(rf.scoring_placements)),
        ):
            r[name].append(value)
        for dec in rf.decisions:
            for name, value in (
                ("match_id", match_id),
                ("round", dec.round),
                ("seats", facts.seats),
                ("seat", dec.seat),
                ("placement_index", dec.placement_index),
                ("double", dec.double),
                ("outcome", dec.outcome),
                ("mover_is_leader", dec.mover_is_leader),
                ("value", dec.value),
                ("same_outcome_before", dec.same_outcome_before),
                ("same_outcome_after", dec.same_outcome_after),
            ):
                d[name].append(value)
    return out


__all__ = [
    "DECISION_COLUMNS",
    "HELD_NEVER",
    "HELD_OTHER",
    "HELD_PARTNER",
    "HELD_SELF",
    "MATCH_COLUMNS",
    "OUTCOMES",
    "PLAYED",
    "ROUND_COLUMNS",
    "SOURCES",
    "Columns",
    "Decision",
    "FactsRows",
    "MatchFacts",
    "RoundFacts",
    "RoundRecorder",
    "SniffDecision",
    "empty_columns",
    "facts_rows",
    "match_facts",
    "replayed_rounds",
    "side_value",
]
