"""Types of the compiled playout kernel (`_kernel.c`): `playout.py` calls it, and the bots
draw from its `Xoshiro256` (`bots.py`)."""

from collections.abc import Sequence

def configure(
    plain: Sequence[int], variants: Sequence[Sequence[tuple[int, bool, Sequence[int]]]]
) -> None: ...
def playout(
    packed: tuple[object, ...], policies: Sequence[int], seed: int, first: int, record: bool
) -> tuple[
    tuple[int, ...], tuple[int, ...], int, int, int, tuple[int, ...], tuple[int, ...], int
]: ...
def rollouts(
    packed: Sequence[tuple[object, ...]], policies: Sequence[int], seeds: Sequence[int], first: int
) -> tuple[list[int], list[int], list[int], int]: ...
def play_matches(
    variant: int,
    seats: int,
    target: int,
    round_limit: int,
    policies: Sequence[int],
    seeds: Sequence[int],
    bot_seeds: Sequence[int],
    record: bool,
) -> tuple[bytes, bytes, bytes, bytes]: ...
def deal(seed: int, round: int, seats: int) -> tuple[tuple[int, ...], int]: ...
def rng_draws(seed: int, bounds: Sequence[int]) -> list[int]: ...

class Xoshiro256:
    """`prng.Xoshiro256` in C: the same seeding, `next` and `below`."""

    def __init__(self, seed: int) -> None: ...
    def next(self) -> int: ...
    def below(self, n: int) -> int: ...
    @property
    def state(self) -> tuple[int, int, int, int]: ...
