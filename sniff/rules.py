"""Facts of American Sniff that depend only on the number of seats (docs/rules.md §1, §2, §7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

RULES_VERSION: Final = "american-sniff/1"
SEAT_COUNTS: Final = (2, 3, 4)
HAND_SIZE: Final = {2: 7, 3: 6, 4: 5}
TARGET: Final = {2: 250, 3: 200, 4: 200}

Seat = int
"""A seat number, 0..seats-1, in turn (clockwise) order."""


def team_of(seat: Seat, seats: int) -> int:
    """The scoring side of a seat: partners 0+2 and 1+3 with four seats, else the seat itself."""
    return seat % 2 if seats == 4 else seat


def winning_seats(winner: Seat, seats: int) -> tuple[Seat, ...]:
    """Every seat that wins with `winner`: its own, and with partners its partner's too."""
    team = team_of(winner, seats)
    return tuple(s for s in range(seats) if team_of(s, seats) == team)


def team_count(seats: int) -> int:
    return 2 if seats == 4 else seats


def deduction(pips: int) -> int:
    """Pips left in one hand, rounded to the nearest five: remainder 1-2 down, 3-4 up (§7)."""
    rest = pips % 5
    return pips - rest if rest <= 2 else pips + 5 - rest


def value_for_side(gains: Sequence[float], side: int) -> float:
    """What a round (or a playout of one) was worth to `side`, from every side's gain in it
    (points scored minus deductions, by side): its gain minus the **mean** of the other
    sides' gains.

    The one definition behind the equity (docs/analysis.md) and the value of a round
    (docs/statistics.md): with two sides (2 or 4 seats) `gain - other`, with three (3
    seats) `gain - (a + b) / 2`, so that a side's value does not grow with the number of
    its opponents.
    """
    mine = gains[side]
    return mine - (sum(gains) - mine) / (len(gains) - 1)
