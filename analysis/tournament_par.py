"""Par per deal in a duplicate tournament: each bot's result against the double-dummy par.

A tournament's net results compare the bots with each other; the par
(analysis/rollout/par.py: the round's value when every seat sees every tile
and plays perfectly) gives them a fixed yardstick besides. In a duplicate
tournament a round that is the same position in every rotation of its deal
has one par, solved once, and every bot's result in it is measured against
that par from each seat it holds. Round 0 always qualifies; a later round
qualifies when every rotation reached it with the same hands, boneyard and
leader and the same scores (the solver's values can depend on the scores
near the target).

A round the solver cannot finish within its budget has no par: it is counted
and shown, never given a value. A bot's value on a deal is the mean of its
results against par over the deal's solved rounds and its rotations; a deal
with no solved round has none. Intervals are over deals, as every other
tournament figure.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from analysis.rollout.par import RoundPar, round_par, round_values
from sniff import Match


def shared_rounds(matches: Sequence[Match]) -> list[int]:
    """The round indices that are one position in every match of a deal: the same deal
    (hands, boneyard, leader) and the same scores before it."""
    out = []
    for index in range(min(len(m.history) for m in matches)):
        deals = {m.history[index].deal for m in matches}
        before = {m.history[index - 1].scores if index else () for m in matches}
        if len(deals) == 1 and len(before) == 1:
            out.append(index)
    return out


def _replayed(match: Match) -> Match:
    """A fresh match with `match`'s settings and no round dealt."""
    return Match(
        match.seats,
        target=match.target,
        variant=match.variant,
        round_limit=match.round_limit,
        auto_deal=False,
    )


def deal_pars(
    matches: Sequence[Match], match_ids: Sequence[str], nodes: int
) -> list[tuple[RoundPar, ...]]:
    """For each match of one deal (its rotations, in order), the par of each shared round
    with the round as that match played it; each par solved once, in the first match."""
    rounds = set(shared_rounds(matches))
    solved: dict[int, RoundPar] = {}
    out = []
    for match, match_id in zip(matches, match_ids, strict=True):
        replay = _replayed(match)
        pars = []
        for index, log in enumerate(match.history):
            replay.deal(log.deal)
            if index in rounds:
                if index not in solved:
                    solved[index] = round_par(match_id, index, replay, log.actions, nodes)
                    pars.append(solved[index])
                else:
                    played = round_values(replay, log.actions)
                    pars.append(replace(solved[index], match_id=match_id, played=played))
            if index >= max(rounds, default=-1):
                break
            for move in log.actions:
                replay.apply(move)
        out.append(tuple(pars))
    return out


def bot_against_par(
    rotations: Sequence[tuple[Sequence[str], Sequence[RoundPar]]], bot: str
) -> float | None:
    """One deal's value for `bot`: its mean result against par (its seats' mean) over the
    solved rounds of the rotations it plays; None when none is solved."""
    values = []
    for players, pars in rotations:
        seats = [s for s, name in enumerate(players) if name == bot]
        for rp in pars:
            against = rp.against_par
            if seats and against is not None:
                values.append(statistics.fmean(against[s] for s in seats))
    return statistics.fmean(values) if values else None


def deal_json(
    deal: int, rotations: Sequence[tuple[Sequence[str], Sequence[RoundPar]]], bots: Sequence[str]
) -> dict[str, Any]:
    """One deal's pars: each shared round's par per seat (the same in every rotation), the
    bounds when unsolved, and each bot's mean result against them."""
    _, first = rotations[0]
    return {
        "deal": deal,
        "rounds": [
            {
                "round": rp.round,
                "leader": rp.leader,
                "solved": rp.solved,
                "par": None if rp.par is None else list(rp.par),
                "low": rp.low,
                "high": rp.high,
                "nodes": rp.nodes,
            }
            for rp in first
        ],
        "against_par": {
            bot: None if (v := bot_against_par(rotations, bot)) is None else round(v, 4)
            for bot in bots
        },
    }


def unsolved(rotations: Sequence[tuple[Sequence[str], Sequence[RoundPar]]]) -> int:
    """How many of a deal's shared rounds have no par."""
    _, first = rotations[0]
    return sum(1 for rp in first if not rp.solved)
