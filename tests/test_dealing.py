"""The seeded deal generator (sniff/dealing.py, docs/dealing.md): its test vectors,
an independent re-implementation from the written description, and its statistics."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from sniff import HAND_SIZE, LeaderChoice, Match, dealing
from sniff.dealing import check_seed, lot, shuffled, shuffled_tiles
from sniff.tiles import NAMES, TILES

# (seed, round) -> the 28 tiles in dealt order, and the lot for 2, 3 and 4 seats.
# These are the vectors docs/dealing.md publishes for other languages.
VECTORS = [
    (
        0,
        0,
        "0-1 0-6 0-0 1-5 2-3 3-3 2-4 0-3 1-3 1-6 5-6 0-4 2-6 4-5 4-4 6-6 5-5 2-5 1-2 2-2 1-4 "
        "0-2 3-6 3-5 4-6 1-1 3-4 0-5",
        [1, 1, 3],
    ),
    (
        1,
        0,
        "2-5 0-2 0-3 3-4 6-6 4-5 3-6 1-3 3-5 3-3 1-4 5-5 5-6 0-0 1-6 0-4 1-5 2-2 2-3 2-4 4-4 "
        "0-6 0-1 4-6 1-2 0-5 1-1 2-6",
        [0, 0, 2],
    ),
    (
        0,
        1,
        "3-6 6-6 1-2 1-4 2-6 0-0 3-3 1-1 2-3 1-3 5-6 0-6 2-5 1-6 0-1 0-4 2-4 4-6 0-5 2-2 3-4 "
        "0-3 4-5 5-5 4-4 1-5 3-5 0-2",
        [0, 2, 0],
    ),
    (
        2**64 - 1,
        7,
        "3-5 1-5 1-2 6-6 3-3 0-4 1-1 5-6 0-0 1-3 2-2 4-5 3-4 1-4 2-5 3-6 0-1 1-6 4-6 0-6 2-6 "
        "2-3 0-5 0-3 5-5 4-4 0-2 2-4",
        [0, 1, 0],
    ),
]


@pytest.mark.parametrize(("seed", "round_index", "tiles", "lots"), VECTORS)
def test_published_vectors(seed: int, round_index: int, tiles: str, lots: list[int]) -> None:
    assert " ".join(NAMES[t] for t in shuffled_tiles(seed, round_index)) == tiles
    assert [lot(seed, round_index, n) for n in (2, 3, 4)] == lots


def test_first_block_of_the_seed_0_deal_stream() -> None:
    """Pins the byte layout of the hash input, so a reimplementation can start here."""
    data = b"sniff/rng/v1\x00deal\x00" + bytes(8) + bytes(4) + bytes(4)
    assert (
        hashlib.sha256(data).hexdigest()
        == "e11ed215e510cc5f13876b3f35b6da299c5f8c04f528a0f8249d73c6924792b5"
    )


def reference_shuffle(seed: int, round_index: int) -> list[int]:
    """docs/dealing.md read literally, with int.from_bytes instead of struct."""
    stream: list[int] = []
    counter = 0

    def word() -> int:
        nonlocal counter
        if not stream:
            block = hashlib.sha256(
                b"sniff/rng/v1"
                + b"\0"
                + b"deal"
                + b"\0"
                + seed.to_bytes(8, "big")
                + round_index.to_bytes(4, "big")
                + counter.to_bytes(4, "big")
            ).digest()
            counter += 1
            stream.extend(int.from_bytes(block[i : i + 4], "big") for i in range(0, 32, 4))
        return stream.pop(0)

    tiles = list(range(28))
    for i in range(27, 0, -1):
        n = i + 1
        limit = 2**32 - 2**32 % n
        x = word()
        while x >= limit:
            x = word()
        j = x % n
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


@pytest.mark.parametrize("seed", [0, 1, 2, 99, 2**32, 2**63 - 1, 2**64 - 1])
@pytest.mark.parametrize("round_index", [0, 1, 5, 40])
def test_the_generator_is_exactly_the_written_description(seed: int, round_index: int) -> None:
    assert shuffled_tiles(seed, round_index) == reference_shuffle(seed, round_index)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_seeded_match_deals_hands_in_order_then_the_boneyard(seats: int) -> None:
    match = Match(seats, seed=5)
    log = match.history[0]
    order = shuffled_tiles(5, 0)
    size = HAND_SIZE[seats]
    assert [list(h) for h in log.deal.hands] == [
        order[s * size : (s + 1) * size] for s in range(seats)
    ]
    assert list(log.deal.boneyard) == order[seats * size :]
    assert log.leader_choice is LeaderChoice.LOT
    assert log.deal.leader == lot(5, 0, seats)


def test_shuffles_are_uniform_enough_over_positions() -> None:
    """Each tile lands in each position about 1/28 of the time (chi-square over 2,000 deals)."""
    counts: Counter[tuple[int, int]] = Counter()
    deals = 2000
    for seed in range(deals):
        for position, tile in enumerate(shuffled_tiles(seed, 0)):
            counts[(position, tile)] += 1
    expected = deals / 28
    chi2 = sum((counts[(p, t)] - expected) ** 2 / expected for p in range(28) for t in range(28))
    # 27*27 = 729 degrees of freedom: mean 729, sd ~38; 950 is beyond 5 sd.
    assert chi2 < 950


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, "7", True])
def test_seeds_outside_64_bits_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="seed"):
        check_seed(bad)  # type: ignore[arg-type]


def test_the_match_shuffles_its_tiles_as_the_numbers_are_shuffled() -> None:
    """`Match` shuffles `Tile`s, the documented generator numbers: the same order."""
    for seed in (0, 1, 2**64 - 1, 987_654_321):
        for round_index in range(4):
            numbers = shuffled_tiles(seed, round_index)
            assert shuffled(seed, round_index, list(TILES)) == [TILES[t] for t in numbers]
    with pytest.raises(ValueError, match="28 tiles"):
        shuffled(0, 0, list(range(27)))


def test_the_stream_read_on_gives_the_same_shuffle_as_the_first_four_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shortcut (no word of the first blocks is rejected) and the general path that reads
    the stream word by word agree wherever nothing is rejected: forced down the general path,
    every shuffle comes out the same."""
    expected = {(seed, r): shuffled_tiles(seed, r) for seed in range(50) for r in range(3)}
    monkeypatch.setattr(dealing, "_LEAST_LIMIT", 0)
    monkeypatch.setattr(dealing, "_DRAW_LIMITS", (0,) * 27)
    assert {key: shuffled_tiles(*key) for key in expected} == expected
