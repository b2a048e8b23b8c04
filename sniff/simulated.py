"""Whole bot matches played to the facts the statistics need: by the engine, or by the kernel.

A simulation wants, of each match, its settings and result, each round's
facts and each Sniff decision's facts (`facts.MatchFacts`, the rows of the
facts tables), not the match's objects. The same matches can be had two
ways, and they are the same matches move for move:

* `engine_matches`, the reference: `Match` dealt from its seed
  (`dealing.py`), seat s played by the `random` or `greedy` bot seeded
  `seeds.bot_seed(seed, s)`, each round followed by a `RoundRecorder`.
* `kernel_matches`, the compiled kernel (`_kernel.c`, `play_matches`): the
  same dealer (SHA-256, docs/dealing.md, computed in C), the same choice
  rules (`policies.py`) from the same generator (`prng.py`) with the same
  seeds, the same rules (its round is the playouts' round) and the same
  facts, tens of times faster.

`tests/test_simulated_matches.py` plays matches both ways (every variant,
2-4 seats, both bots, round limits) and requires identical moves, scores,
results and facts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from sniff.bots import make_bot
from sniff.dealing import DEALING_VERSION, check_seed
from sniff.facts import (
    OUTCOMES,
    MatchFacts,
    RoundFacts,
    RoundRecorder,
    SniffDecision,
    match_facts,
    side_value,
)
from sniff.match import Match, Phase, RoundEndKind
from sniff.playout import POLICIES, code_of
from sniff.playout import kernel_matches as _kernel_rows
from sniff.rules import RULES_VERSION, SEAT_COUNTS, TARGET
from sniff.seeds import BOT_DOMAIN, bot_seed
from sniff.variants import variant_named
from sniff.view import view

WON: Final = "won"
"""A match ended by a side reaching the target (at a placement, mid-round)."""
LIMIT: Final = "limit"
"""A match ended with the last round of its round limit (won by the side ahead, or drawn)."""

SIM_VERSION: Final = (
    f"sniff-sim/1; rules {RULES_VERSION}; dealing {DEALING_VERSION}; bots {BOT_DOMAIN}"
)
"""What decides a simulated match besides its seed and settings: the rules, the dealer and
the bots (their choice rules and seeds, docs/simulate.md). A match stored as facts is
regenerated only by code of the same version; change it with any of them."""

# The kernel's rows (`_kernel.c`, play_matches): int32 columns in these orders; per-seat
# columns are 4 wide whatever the seat count.
_SEATS_MAX: Final = 4
_MATCH_COLS: Final = 5 + _SEATS_MAX  # winner, ended, rounds, first leader, actions, scores
_ROUND_COLS: Final = 14 + 5 * _SEATS_MAX
"""match, round, leader, complete, maker, sniff index, double, orientation, covered after,
ending, finisher, actions, Sniff points, of them the maker side's; then per seat: net,
points, deductions, placements, scoring placements."""
_DECISION_COLS: Final = 9
"""match, round, seat, placement index, double, outcome, mover is leader, same outcome
before, after."""
_ORIENTATIONS: Final = (None, "cross", "inline")
_ENDINGS: Final = (RoundEndKind.DOMINO.value, RoundEndKind.BLOCKED.value)
_ENDED: Final = (WON, LIMIT)


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """What decides a run's matches but the seeds: seat s plays `bots[s % len(bots)]`."""

    seats: int
    bots: tuple[str, ...]
    variant: str = "american"
    target: int | None = None
    """None: the rules' target for the seat count."""
    round_limit: int | None = None

    def __post_init__(self) -> None:
        if self.seats not in SEAT_COUNTS:
            raise ValueError(f"Sniff is played by 2, 3 or 4, not {self.seats}")
        if not self.bots or any(b not in POLICIES for b in self.bots):
            raise ValueError(f"whole matches are played by {' and '.join(POLICIES)} bots")
        variant_named(self.variant)
        if self.target is not None and not 0 < self.target <= 1 << 30:
            raise ValueError(f"a target is an integer from 1 to 2**30, not {self.target}")
        if self.round_limit is not None and self.round_limit <= 0:
            raise ValueError(f"a round limit must be positive, not {self.round_limit}")

    @property
    def seat_bots(self) -> tuple[str, ...]:
        return tuple(self.bots[s % len(self.bots)] for s in range(self.seats))

    @property
    def points_target(self) -> int:
        return TARGET[self.seats] if self.target is None else self.target


@dataclass(frozen=True, slots=True)
class PlayedMatch:
    """One whole match as a simulation keeps it."""

    seed: int
    facts: MatchFacts
    ended: str
    """`WON` or `LIMIT`."""
    actions: int
    moves: tuple[tuple[int, ...], ...] = ()
    """Per round, every action's move code (`playout.move_of`), when recorded."""


def engine_matches(
    settings: MatchSettings, seeds: Sequence[int], record: bool = False
) -> list[PlayedMatch]:
    """The matches seeded `seeds`, played by the engine and its bots (the reference)."""
    return [_engine_match(settings, check_seed(seed), record) for seed in seeds]


def _engine_match(settings: MatchSettings, seed: int, record: bool) -> PlayedMatch:
    match = Match(
        settings.seats,
        seed=seed,
        target=settings.target,
        variant=settings.variant,
        round_limit=settings.round_limit,
        auto_deal=False,
    )
    bots = [make_bot(name, bot_seed(seed, s)) for s, name in enumerate(settings.seat_bots)]
    rounds: list[RoundFacts] = []
    moves: list[tuple[int, ...]] = []
    actions = 0
    while match.phase is not Phase.OVER:
        match.deal()
        recorder = RoundRecorder(match)
        codes: list[int] = []
        while match.phase is Phase.PLAYING:
            recorder.before(match)
            seat = match.turn
            move = bots[seat].choose(view(match, seat))
            result = match.apply(move)
            recorder.after(match, seat, move, result.points)
            actions += 1
            if record:
                codes.append(code_of(move))
        rounds.append(recorder.facts(match.history[-1]))
        moves.append(tuple(codes))
    ended = WON if match.history[-1].end is None else LIMIT
    return PlayedMatch(
        seed, match_facts(match, rounds), ended, actions, tuple(moves) if record else ()
    )


def kernel_matches(
    settings: MatchSettings, seeds: Sequence[int], record: bool = False
) -> list[PlayedMatch]:
    """The matches seeded `seeds`, played by the kernel: the same matches as
    `engine_matches`' (the kernel must be built)."""
    seeds = [check_seed(s) for s in seeds]
    raw = kernel_matches_raw(settings, seeds, record=record)  # bot seeds derived in C
    return list(_read(settings, seeds, *raw, record))


def kernel_matches_raw(
    settings: MatchSettings,
    seeds: Sequence[int],
    bot_seeds: Sequence[int] | None = None,
    record: bool = False,
) -> tuple[bytes, bytes, bytes, bytes]:
    """The kernel's rows for those matches, unread (what a bulk writer takes as columns);
    without `bot_seeds` the kernel derives `seeds.bot_seed` itself."""
    return _kernel_rows(
        variant_named(settings.variant),
        settings.seats,
        settings.points_target,
        settings.round_limit,
        [POLICIES[b] for b in settings.seat_bots],
        seeds,
        bot_seeds,
        record,
    )


def _rows(data: bytes, width: int) -> list[memoryview]:
    ints = memoryview(data).cast("i")
    return [ints[i : i + width] for i in range(0, len(ints), width)]


def _read(
    settings: MatchSettings,
    seeds: Sequence[int],
    matches: bytes,
    rounds: bytes,
    decisions: bytes,
    moves: bytes,
    record: bool,
) -> Iterator[PlayedMatch]:
    """The kernel's rows as `PlayedMatch`es (the facts exactly as `facts.py` makes them)."""
    seats = settings.seats
    round_rows = iter(_rows(rounds, _ROUND_COLS))
    decision_rows = _rows(decisions, _DECISION_COLS)
    codes = memoryview(moves).cast("i")
    at_decision = at_move = 0
    for m, row in enumerate(_rows(matches, _MATCH_COLS)):
        winner, ended, count, first_leader, actions = row[:5]
        facts: list[RoundFacts] = []
        played: list[tuple[int, ...]] = []
        for _ in range(count):
            r = next(round_rows)
            assert r[0] == m
            n_actions = r[11]
            if record:
                played.append(tuple(codes[at_move : at_move + n_actions]))
                at_move += n_actions
            mine: list[memoryview] = []
            while at_decision < len(decision_rows) and decision_rows[at_decision][0] == m:
                d = decision_rows[at_decision]
                if d[1] != r[1]:
                    break
                mine.append(d)
                at_decision += 1
            facts.append(_round_facts(r, mine, seats))
        yield PlayedMatch(
            seeds[m],
            MatchFacts(
                seats=seats,
                variant=settings.variant,
                target=settings.points_target,
                round_limit=settings.round_limit,
                finished=True,
                winner=None if winner < 0 else winner,
                first_leader=first_leader,
                scores=tuple(row[5 : 5 + seats]),
                rounds=tuple(facts),
            ),
            _ENDED[ended],
            actions,
            tuple(played),
        )


def _round_facts(r: memoryview, decisions: list[memoryview], seats: int) -> RoundFacts:
    def per_seat(k: int) -> tuple[int, ...]:
        start = 14 + k * _SEATS_MAX
        return tuple(r[start : start + seats])

    complete = bool(r[3])
    maker = None if r[4] < 0 else r[4]
    net = per_seat(0) if complete else None
    return RoundFacts(
        round=r[1],
        leader=r[2],
        complete=complete,
        maker=maker,
        sniff_index=None if r[5] < 0 else r[5],
        double=None if r[6] < 0 else r[6],
        orientation=_ORIENTATIONS[r[7]],
        covered_after=None if r[8] < 0 else r[8],
        net=net,
        value=None if net is None else side_value(net, r[2] if maker is None else maker),
        sniff_points=r[12],
        sniff_points_maker_side=r[13],
        sniff_points_others=r[12] - r[13],
        ending=_ENDINGS[r[9]] if complete else None,
        finisher=None if r[10] < 0 else r[10],
        points=per_seat(1),
        deductions=per_seat(2) if complete else None,
        placements=per_seat(3),
        scoring_placements=per_seat(4),
        decisions=tuple(
            SniffDecision(
                round=d[1],
                seat=d[2],
                placement_index=d[3],
                double=d[4],
                outcome=OUTCOMES[d[5]],
                mover_is_leader=bool(d[6]),
                value=side_value(net, d[2]),
                same_outcome_before=d[7],
                same_outcome_after=d[8],
            )
            for d in decisions
            if net is not None
        ),
    )


def play_matches(
    settings: MatchSettings,
    seeds: Sequence[int],
    record: bool = False,
    backend: str | None = None,
) -> list[PlayedMatch]:
    """The matches seeded `seeds`, by the kernel when it is built (`playout.BACKEND`), else
    by the engine; `backend` "c" or "python" chooses."""
    from sniff.playout import BACKEND

    chosen = BACKEND if backend is None else backend
    if chosen == "python":
        return engine_matches(settings, seeds, record)
    if chosen != "c":
        raise ValueError(f"backend {backend!r}: use 'c' or 'python'")
    return kernel_matches(settings, seeds, record)


__all__ = [
    "LIMIT",
    "SIM_VERSION",
    "WON",
    "MatchSettings",
    "PlayedMatch",
    "engine_matches",
    "kernel_matches",
    "kernel_matches_raw",
    "play_matches",
]
