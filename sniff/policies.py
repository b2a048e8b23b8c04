"""The choice rules of the built-in policies, `random` and `greedy`, written once.

The `random` and `greedy` bots (`bots.py`) and the playouts' policies
(`playout.py`, and its C transcription `_kernel.c`) choose by these rules
from the documented generator (`prng.Xoshiro256`), so a match played by the
engine with its bots and the same match played by the kernel make the same
moves, draw for draw:

* ``random``: ``moves[below(len(moves))]`` over the legal moves in the
  engine's canonical order, when there is more than one; no draw otherwise.
* ``greedy``: the moves scoring most at once, kept in canonical order;
  ``tied[below(len(tied))]`` when more than one ties; no draw otherwise
  (a draw or a pass, the only action when it is one, draws nothing either).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from sniff.moves import Move


class Generator(Protocol):
    """What a policy asks of its generator: an unbiased index (`prng.Xoshiro256.below`)."""

    def below(self, n: int) -> int: ...


def random_choice(moves: Sequence[Move], rng: Generator) -> Move:
    """Uniform over `moves` (canonical order); no draw when there is one move."""
    return moves[0] if len(moves) == 1 else moves[rng.below(len(moves))]


def greedy_choice(
    moves: Sequence[Move], points_after: Callable[[Move], int], rng: Generator
) -> Move:
    """The move that scores most at once, ties drawn uniformly by `rng` in canonical order
    (one rule for the bot, the playouts and remote players alike)."""
    if len(moves) == 1 or not moves[0].is_placement:
        return moves[0]
    best: list[Move] = []
    top = -1
    for move in moves:
        points = points_after(move)
        if points > top:
            top, best = points, [move]
        elif points == top:
            best.append(move)
    return best[0] if len(best) == 1 else best[rng.below(len(best))]
