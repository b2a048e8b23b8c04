"""Double-dummy par of each deal: what the round comes to when every seat sees every tile
(every hand and the boneyard in draw order) and plays perfectly, and each side's result
against it (docs/analysis.md, "Par").

As bridge's double-dummy solvers do for a deal, the par is a property of the deal alone:
no one could have known it while playing, but the difference between the round as played
and its par says how much the players gave away (or were given) against the best the
tiles allowed, luck of the deal taken out. The par comes from the exact solver
(`sniff.solver`, `double_dummy=True`) from the round's first decision: the gains of every
side along the solver's best line. Two or four seats are solved as a two-sided game, three
by max^n; a deal the solver cannot finish within its budget has no par, only the bounds
proven for the leader's side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from analysis.rollout.source import MatchSpec
from sniff import Deal, Match, Move, Phase
from sniff.playout import PlayoutState
from sniff.rules import value_for_side
from sniff.solver import Budget, NotSolved, solve

PAR_NODES: Final = 1_000_000
"""The solver's budget per deal: a two-seat deal takes well under 100,000 nodes, a four-seat
one a few hundred thousand; three seats (max^n, no pruning) mostly stay unsolved."""


@dataclass(frozen=True, slots=True)
class RoundPar:
    """One deal's par and the round as played, per seat (the value of its side's gains:
    its gain minus the mean of the other sides', as the equity)."""

    match_id: str
    round: int
    leader: int
    solved: bool
    par: tuple[float, ...] | None
    """Per seat, its side's value under perfect double-dummy play; None when not solved."""
    played: tuple[float, ...]
    """Per seat, its side's value of the round as it was played."""
    low: float
    """The leader's side's par is at least this (equal to its par when solved)."""
    high: float
    nodes: int

    @property
    def against_par(self) -> tuple[float, ...] | None:
        """Per seat: played minus par (positive: better than perfect play against it)."""
        if self.par is None:
            return None
        return tuple(p - q for p, q in zip(self.played, self.par, strict=True))

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "round": self.round,
            "leader": self.leader,
            "solved": self.solved,
            "par": None if self.par is None else list(self.par),
            "played": list(self.played),
            "against_par": None if self.against_par is None else list(self.against_par),
            "low": self.low,
            "high": self.high,
            "nodes": self.nodes,
        }


def round_values(match: Match, line: Sequence[Move]) -> tuple[float, ...]:
    """Per seat, its side's value of the rest of the round when `line` is played from
    `match` (not changed)."""
    rest = match.copy(keep_history=False)
    before = list(rest.scores)
    round_index = rest.round_index
    for move in line:
        rest.apply(move)
        if rest.phase is not Phase.PLAYING or rest.round_index != round_index:
            break
    gains = [after - b for after, b in zip(rest.scores, before, strict=True)]
    return tuple(value_for_side(gains, match.teams[s]) for s in range(match.seats))


def round_par(
    match_id: str, index: int, match: Match, actions: Sequence[Move], nodes: int
) -> RoundPar:
    """The par of the round `match` has just dealt (round `index`, not changed), and the
    round as `actions` played it."""
    played = round_values(match, actions)
    state = PlayoutState.of_match(match)
    leader_side = match.teams[match.turn]
    try:
        solution = solve(state, Budget(nodes=nodes), double_dummy=True)
    except NotSolved as e:
        return RoundPar(match_id, index, match.turn, False, None, played, e.low, e.high, e.nodes)
    par = round_values(match, solution.line)
    assert par[match.turn] == solution.value or match.teams.count(leader_side) > 1
    return RoundPar(
        match_id,
        index,
        match.turn,
        True,
        par,
        played,
        solution.value,
        solution.value,
        solution.nodes,
    )


def match_pars(spec: MatchSpec, nodes: int = PAR_NODES) -> list[RoundPar]:
    """The par of every deal of the match, round by round."""
    match = spec.rebuild()
    out = []
    for index, rnd in enumerate(spec.rounds):
        match.deal(Deal.of(rnd.hands, rnd.boneyard, rnd.leader))
        actions = [Move.parse(a) for a in rnd.actions]
        out.append(round_par(spec.match_id, index, match, actions, nodes))
        for move in actions:
            match.apply(move)
    return out


def pars_of(job: tuple[MatchSpec, int]) -> list[RoundPar]:
    """`match_pars` for a worker (one match a job)."""
    return match_pars(*job)
