"""Reference players: `random` (uniform over legal moves) and `greedy` (most immediate points).

Both draw every random choice from their own seeded generator, so a match
between bots is reproducible from the match seed and the bot seeds.
"""

from __future__ import annotations

import random
from typing import Protocol

from service.engine.layout import points_for
from service.engine.match import Match, Phase
from service.engine.moves import Move


class Bot(Protocol):
    name: str

    def choose(self, match: Match) -> Move: ...


class RandomBot:
    """Uniform over the legal moves."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, match: Match) -> Move:
        return self.rng.choice(match.legal_moves())


class GreedyBot:
    """The placement that scores most at once; ties broken by the bot's generator."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, match: Match) -> Move:
        moves = match.legal_moves()
        if len(moves) == 1 or not moves[0].is_placement:
            return moves[0]
        layout = match.layout
        best: list[Move] = []
        top = -1
        for move in moves:
            points = points_for(layout.ends_after(move))
            if points > top:
                top, best = points, [move]
            elif points == top:
                best.append(move)
        return best[0] if len(best) == 1 else self.rng.choice(best)


BOTS: dict[str, type[RandomBot] | type[GreedyBot]] = {"random": RandomBot, "greedy": GreedyBot}


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A bot by its name (`random`, `greedy`)."""
    try:
        return BOTS[name](seed)
    except KeyError:
        raise ValueError(f"no bot named {name!r} (one of {', '.join(BOTS)})") from None


def play_match(match: Match, bots: list[Bot]) -> Match:
    """Play `match` to its end, seat i choosing with `bots[i]`; rounds are dealt from its seed."""
    while True:
        while match.phase is Phase.PLAYING:
            match.apply(bots[match.turn].choose(match))
        if match.phase is Phase.OVER:
            return match
        match.deal()
