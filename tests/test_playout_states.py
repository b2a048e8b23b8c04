"""Playout states and calls: impossible states and bad arguments are refused with a clear
error by both backends, garbage never crashes the kernel, and the backend in use is chosen by
`SNIFF_KERNEL` and shown by `sniff --version`."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sniff import (
    BERNDT,
    VARIANTS,
    IllegalMove,
    Match,
    Move,
    Phase,
    make_bot,
    view,
)
from sniff.playout import (
    KERNEL_AVAILABLE,
    BadPlayoutState,
    PlayoutState,
    Policy,
    code_of,
    move_of,
    playout,
    rollouts,
)
from sniff.tiles import FULL_SET
from tests.helpers import example_count

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("c", "python")


def midround(seats: int = 3, seed: int = 4, actions: int = 9, variant: str = "berndt") -> Match:
    match = Match(seats, seed=seed, variant=variant)
    bots = [make_bot("greedy", s) for s in range(seats)]
    for _ in range(actions):
        match.apply(bots[match.turn].choose(view(match, match.turn)))
    assert match.phase is Phase.PLAYING
    return match


def changed(state: PlayoutState, **fields: Any) -> PlayoutState:
    values = {f.name: getattr(state, f.name) for f in dataclasses.fields(state) if f.init}
    return PlayoutState(**{**values, **fields})


def test_a_match_state_round_trips_through_move_codes() -> None:
    state = PlayoutState.of_match(midround())
    for move in (*state.placements, *state.legal_moves(), Move.draw(), Move.pass_()):
        assert move_of(code_of(move)) is move


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_stepped_state_is_the_state_the_constructor_checks_further_on(seats: int) -> None:
    """`stepped` skips the check, so it must build exactly what the constructor builds from
    the same later position of the round, kernel packing included."""
    for variant in sorted(VARIANTS):
        for seed in range(3):
            match = Match(seats, seed=seed, variant=variant, round_limit=1)
            bots = [make_bot("random", seed * 5 + s) for s in range(seats)]
            start = PlayoutState.of_match(match)
            steps = 0
            while match.phase is Phase.PLAYING:
                later = PlayoutState.of_match(match)
                stepped = start.stepped(
                    later.scores,
                    later.placements,
                    later.hands,
                    later.boneyard,
                    later.turn,
                    later.drawn,
                )
                assert stepped == later
                assert stepped._packed == later._packed
                match.apply(bots[match.turn].choose(view(match, match.turn)))
                steps += 1
            assert steps > 1


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"seats": 5}, "2, 3 or 4"),
        ({"target": 0}, "target"),
        ({"scores": (0, 0)}, "scores"),
        ({"scores": (0, 200, 0)}, "target"),
        ({"turn": 3}, "turn"),
        ({"drawn": 27}, "drawn tile"),
        ({"boneyard": ()}, "all 28 tiles"),
    ],
)
def test_impossible_states_are_refused(fields: dict[str, Any], words: str) -> None:
    state = PlayoutState.of_match(midround())
    with pytest.raises(BadPlayoutState, match=words):
        changed(state, **fields)


def test_tiles_twice_an_empty_hand_or_an_illegal_layout_are_refused() -> None:
    state = PlayoutState.of_match(midround())
    hands = list(state.hands)
    with pytest.raises(BadPlayoutState, match="another seat"):
        changed(state, hands=(hands[0], hands[0], hands[2]))
    with pytest.raises(BadPlayoutState, match="boneyard and in a hand"):
        changed(state, boneyard=(*state.boneyard, (hands[0] & -hands[0]).bit_length() - 1))
    with pytest.raises(BadPlayoutState, match="empty"):
        changed(state, hands=(0, hands[1], hands[2] | hands[0]))
    with pytest.raises(BadPlayoutState, match="not legal"):
        changed(state, placements=state.placements[1:])


def test_a_blocked_round_is_not_a_state_to_play_from() -> None:
    for seed in range(200):
        match = Match(2, seed=seed, variant="stubby")
        bots = [make_bot("random", seed), make_bot("random", seed + 1)]
        while match.phase is Phase.PLAYING:
            result = match.apply(bots[match.turn].choose(view(match, match.turn)))
        if result.round_end is not None and result.round_end.finisher is None:
            break
    else:
        raise AssertionError("no blocked round in 200 matches")
    with pytest.raises(BadPlayoutState, match="blocked already"):
        PlayoutState(
            match.variant,
            2,
            match.target,
            tuple(match.scores),
            tuple(match.layout.placements),
            tuple(match.hands),
            (),
            0,
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_arguments_are_refused(backend: str) -> None:
    state = PlayoutState.of_match(midround())
    with pytest.raises(ValueError, match="policy"):
        playout(state, "clever", 1, backend=backend)
    with pytest.raises(ValueError, match="one per seat"):
        playout(state, ("random", "greedy"), 1, backend=backend)
    with pytest.raises(ValueError, match="seed"):
        playout(state, "random", -1, backend=backend)
    with pytest.raises(ValueError, match="seed"):
        rollouts(state, "random", n=2, base_seed=(1 << 64) - 1, backend=backend)
    with pytest.raises(IllegalMove, match="not a legal move"):
        playout(state, "random", 1, first=Move.pass_(), backend=backend)
    with pytest.raises(ValueError, match="one per seed"):
        rollouts([state, state], "random", [1, 2, 3], backend=backend)
    other = PlayoutState.of_match(Match(2, seed=1))
    with pytest.raises(ValueError, match="same number of seats"):
        rollouts([state, other], "random", [1, 2], backend=backend)
    with pytest.raises(ValueError, match="backend"):
        playout(state, "random", 1, backend="fortran")
    assert rollouts(state, "random", n=0, backend=backend).count == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_berndt_sniff_leads_come_in_both_orientations_and_random_plays_both(backend: str) -> None:
    seed = next(s for s in range(100) if any(t.is_double for t in _leader_hand(s)))
    state = PlayoutState.of_match(Match(2, seed=seed, variant=BERNDT))
    doubles = [m for m in state.legal_moves() if m.tile is not None and m.tile.is_double]
    assert [str(m.orientation) for m in doubles[:2]] == ["cross", "inline"]
    first_moves = {
        move_of(playout(state, "random", s, record=True, backend=backend).moves[0])
        for s in range(400)
    }
    assert set(doubles) <= first_moves


def _leader_hand(seed: int) -> list[Any]:
    match = Match(2, seed=seed, variant=BERNDT)
    return match.hand(match.turn)


def test_of_view_keeps_the_public_facts_and_takes_the_sampled_tiles() -> None:
    match = midround(seats=4, actions=6, variant="stubby")
    seen = view(match, 1)
    state = PlayoutState.of_view(seen, match.hands, match.boneyard[match.bone_pos :], match.drawn)
    assert state == PlayoutState.of_match(match)


# -- the kernel against garbage ----------------------------------------------------

small = st.integers(-3, 40)
packed_states = st.tuples(
    st.integers(-1, 5),
    st.integers(1, 5),
    st.one_of(st.integers(-5, 300), st.just(1 << 40)),
    st.lists(st.integers(-300, 300), max_size=5),
    st.lists(st.integers(-1, 1 << 17), max_size=30),
    st.lists(st.one_of(st.integers(-1, FULL_SET + 1), st.just(1 << 70)), max_size=5),
    st.lists(small, max_size=30),
    small,
    small,
)


@settings(max_examples=example_count(300), deadline=None)
@given(packed=packed_states, seed=st.integers(0, 1 << 64))
def test_the_kernel_refuses_garbage_without_crashing(packed: tuple[Any, ...], seed: int) -> None:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    with contextlib.suppress(ValueError):
        _kernel.playout(packed, (0, 1, 0, 1)[: max(packed[1], 0)], seed, -1, True)


def test_a_real_state_with_one_tile_moved_is_refused_by_the_kernel_too() -> None:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    packed: list[Any] = list(PlayoutState.of_match(midround())._packed)
    hands = list(packed[5])
    hands[1] |= hands[0] & -hands[0]
    packed[5] = tuple(hands)
    with pytest.raises(ValueError, match="two places"):
        _kernel.playout(tuple(packed), (0, 0, 0), 1, -1, False)


# -- choosing the backend ----------------------------------------------------------


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_sniff_kernel_python_forces_the_reference() -> None:
    proc = run_python("from sniff import playout; print(playout.BACKEND)", SNIFF_KERNEL="python")
    assert proc.stdout.strip() == "python", proc.stderr


def test_the_kernel_is_the_default_where_it_is_built() -> None:
    proc = run_python(
        "from sniff import playout; print(playout.BACKEND, playout.KERNEL_AVAILABLE)",
        SNIFF_KERNEL="",
    )
    assert proc.stdout.split() == ["c", "True"], proc.stderr


@pytest.mark.slow
def test_an_unknown_sniff_kernel_value_is_a_clear_error() -> None:
    proc = run_python("import sniff.playout", SNIFF_KERNEL="fast")
    assert proc.returncode != 0
    assert "SNIFF_KERNEL='fast': use 'c' or 'python'" in proc.stderr


def sniff_version(**env: str) -> subprocess.CompletedProcess[str]:
    return run_python("from analysis.cli.main import cli; cli(['--version'])", **env)


@pytest.mark.slow
def test_sniff_version_says_which_playout_backend_is_in_use() -> None:
    assert "(playout kernel: c)" in sniff_version(SNIFF_KERNEL="").stdout
    assert "(playout kernel: python)" in sniff_version(SNIFF_KERNEL="python").stdout
    bad = sniff_version(SNIFF_KERNEL="fast")
    assert bad.returncode == 2
    assert bad.stderr.startswith("Error: SNIFF_KERNEL='fast'"), bad.stderr
    assert "Traceback" not in bad.stderr


# -- the kernel and the reference refuse the same states ------------------------------

_BASES: list[PlayoutState] = []


def _bases() -> list[PlayoutState]:
    if not _BASES:
        for i, variant in enumerate(("american", "stubby", "berndt", "british")):
            for seats in (2, 3, 4):
                for actions in (0, 3, 11):
                    try:
                        match = midround(
                            seats, seed=i * 10 + seats, actions=actions, variant=variant
                        )
                    except AssertionError:
                        continue
                    _BASES.append(PlayoutState.of_match(match))
    return _BASES


def _mutated(state: PlayoutState, rng: random.Random) -> tuple[Any, ...]:
    """The packed state with a few random changes, lawful or not."""
    packed: tuple[Any, ...] = state._packed
    variant, seats, target, scores, placements, hands, bone, turn, drawn = packed
    scores, placements = list(scores), list(placements)
    hands, bone = list(hands), list(bone)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(9)
        if op == 0 and bone:  # a boneyard tile into a hand: lawful
            hands[rng.randrange(seats)] |= 1 << bone.pop(rng.randrange(len(bone)))
        elif op == 1:  # a tile from one hand to another
            src = rng.randrange(seats)
            if hands[src]:
                low = hands[src] & -hands[src]
                hands[src] ^= low
                hands[rng.randrange(seats)] |= low
        elif op == 2:  # take back the last placement into a hand
            if placements:
                code = placements.pop()
                hands[rng.randrange(seats)] |= 1 << (code >> 2 & 31)
        elif op == 3:
            rng.shuffle(bone)
        elif op == 4 and bone:
            bone.pop()
        elif op == 5:
            turn = rng.randrange(-1, seats + 1)
        elif op == 6:
            drawn = rng.randrange(-1, 28)
        elif op == 7:
            scores[rng.randrange(len(scores))] = rng.randrange(-300, 300)
        else:
            hands[rng.randrange(seats)] ^= 1 << rng.randrange(28)
    return (
        variant,
        seats,
        target,
        tuple(scores),
        tuple(placements),
        tuple(hands),
        tuple(bone),
        turn,
        drawn,
    )


def _unpacked(packed: tuple[Any, ...]) -> PlayoutState:
    variant, seats, target, scores, placements, hands, bone, turn, drawn = packed
    return PlayoutState(
        list(VARIANTS.values())[variant],
        seats,
        target,
        scores,
        tuple(move_of(c) for c in placements),
        hands,
        bone,
        turn,
        drawn,
    )


@settings(max_examples=example_count(400), deadline=None)
@given(seed=st.integers(0, 1 << 32))
def test_kernel_and_reference_accept_the_same_states(seed: int) -> None:
    if not KERNEL_AVAILABLE:
        pytest.fail("the C playout kernel is not built (pip install -e .)")
    from sniff import _kernel

    rng = random.Random(seed)
    base = rng.choice(_bases())
    packed = _mutated(base, rng)
    policies = tuple(rng.randrange(2) for _ in range(packed[1]))
    try:
        state = _unpacked(packed)
    except ValueError:
        state = None
    try:
        fast = _kernel.playout(packed, policies, seed, -1, True)
    except ValueError:
        fast = None
    assert (state is None) == (fast is None), (packed, state, fast)
    if state is not None and fast is not None:
        pols = tuple(Policy(p) for p in policies)
        ref = playout(state, pols, seed, record=True, backend="python")
        assert playout(state, pols, seed, record=True, backend="c") == ref
