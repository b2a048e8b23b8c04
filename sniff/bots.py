"""Players: `random` (uniform over legal moves), `greedy` (most immediate points),
`rollout` (determinized Monte Carlo rollouts, `rollout.py`) and `ismcts` (information-set
Monte Carlo tree search, `ismcts.py`).

A bot sees what its seat may see and nothing more: it is handed the seat's
`SeatView` (its own hand, the public layout and history), never the match,
so no bot can read another hand or the boneyard order. Each draws every
random choice from its own seeded generator, so a match between bots is
reproducible from the match seed and the bot seeds (`seeds.bot_seed`).
`random` and `greedy` choose exactly as the playout policies of the same
names (`policies.py`), from the same documented generator (`prng.py`): the
compiled kernel plays their matches move for move (`simulated.py`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from sniff.backend import BACKEND, kernel
from sniff.dealing import check_seed
from sniff.match import Match, Phase
from sniff.moves import Move
from sniff.policies import Generator, greedy_choice, random_choice
from sniff.prng import Xoshiro256
from sniff.view import view


class PlayerView(Protocol):
    """What the reference bots ask of a position: a `SeatView`, or a client's own picture of
    the position it was served (the remote players of `analysis/remote.py`)."""

    def legal_moves(self) -> list[Move]: ...

    def points_after(self, move: Move) -> int: ...


class Bot(Protocol):
    name: str

    def choose(self, view: PlayerView) -> Move: ...


class RandomBot:
    """Uniform over the legal moves (`policies.random_choice`)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = _generator(seed)

    def choose(self, view: PlayerView) -> Move:
        return random_choice(view.legal_moves(), self.rng)


class GreedyBot:
    """The placement that scores most at once; ties broken by the bot's generator
    (`policies.greedy_choice`)."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = _generator(seed)

    def choose(self, view: PlayerView) -> Move:
        return greedy_choice(view.legal_moves(), view.points_after, self.rng)


def _generator(seed: int | None) -> Generator:
    """The documented generator (`prng.py`) the playouts use too, so the kernel can play a
    bot's match move for move; without a seed, a fresh one from the system's entropy.

    Its C transcription (`_kernel.Xoshiro256`) when the kernel is the backend
    (`backend.BACKEND`): the same draws, without a microsecond of Python per choice."""
    return _GENERATOR(secrets.randbits(64) if seed is None else check_seed(seed))


_GENERATOR: Final[Callable[[int], Generator]] = kernel.Xoshiro256 if BACKEND == "c" else Xoshiro256


def _rollout_bot(seed: int | None = None) -> Bot:
    """The `rollout` bot (`rollout.py`), imported when first asked for: it brings the
    sampler and the playout kernel, which the reference bots do not need."""
    from sniff.rollout import RolloutBot

    return RolloutBot(seed)


def _ismcts_bot(seed: int | None = None) -> Bot:
    """The `ismcts` bot (`ismcts.py`), imported when first asked for, like `rollout`."""
    from sniff.ismcts import IsmctsBot

    return IsmctsBot(seed)


BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "rollout": _rollout_bot,
    "ismcts": _ismcts_bot,
}
"""Every bot by name: a factory taking the bot's seed."""


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A bot by its name (`random`, `greedy`, `rollout`, `ismcts`)."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise ValueError(f"no bot named {name!r} (one of {', '.join(BOTS)})") from None
    return factory(seed)


def parse_bots(text: str) -> tuple[str, ...]:
    """A comma-separated list of bot names (`greedy,random`), each checked: the one place
    that validates `--bots` for every command."""
    names = tuple(n.strip() for n in text.split(","))
    if not names or any(not n for n in names):
        raise ValueError(f"{text!r}: name bots separated by commas, like 'greedy,random'")
    for n in names:
        if n not in BOTS:
            raise ValueError(f"no bot named {n!r} (one of {', '.join(BOTS)})")
    return names


def play_match(match: Match, bots: Sequence[Bot]) -> Match:
    """Play `match` to its end, seat i choosing with `bots[i]` from its own view; rounds are
    dealt from the match's seed."""
    # Bound once: this loop runs once per action of every simulated match.
    choosers = [bot.choose for bot in bots]
    apply = match.apply
    while True:
        while match.phase is _PLAYING:
            seat = match.turn
            apply(choosers[seat](view(match, seat)))
        if match.phase is _OVER:
            return match
        match.deal()


_PLAYING: Final = Phase.PLAYING
_OVER: Final = Phase.OVER
