"""The counts a view copies from the match (hand sizes, each seat's draws) are kept as each
action is made; they must agree with the hands and the boneyard they summarise."""

from __future__ import annotations

import pytest

from sniff import VARIANTS, Match, Phase, RandomBot, view
from sniff.tiles import tiles_of


def drawn_by(match: Match, seat: int) -> tuple[int, ...]:
    """The tiles `seat` drew this round, found the slow way: by searching the boneyard."""
    return tuple(t for t, s in zip(match.boneyard, match.draw_seats, strict=False) if s == seat)


def check_views(match: Match) -> None:
    for seat in range(match.seats):
        seen = view(match, seat)
        assert seen.hand_sizes == tuple(len(tiles_of(h)) for h in match.hands)
        assert seen.own_draws == drawn_by(match, seat)
        assert seen.boneyard_size == match.boneyard_left
        assert seen.legal == (tuple(match.legal_moves()) if seat == match.turn else ())
    everything = view(match, None)
    assert everything.own_draws == tuple(match.boneyard[: len(match.draw_seats)])
    assert everything.hand_sizes == tuple(len(tiles_of(h)) for h in match.hands)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_view_counts_agree_with_the_hands_after_every_action(seats: int, variant: str) -> None:
    match = Match(seats, seed=seats * 7 + len(variant), variant=variant, round_limit=3)
    bots = [RandomBot(s) for s in range(seats)]
    draws = 0
    while match.phase is not Phase.OVER:
        if match.phase is Phase.AWAITING_DEAL:
            match.deal()
        check_views(match)
        check_views(match.copy())
        check_views(match.copy(keep_history=False))
        seat = match.turn
        draws += match.apply(bots[seat].choose(view(match, seat))).drawn is not None
    check_views(match)
    assert draws > 0


def test_a_kept_view_does_not_change_as_the_match_goes_on() -> None:
    match = Match(2, seed=11)
    bots = [RandomBot(0), RandomBot(1)]
    kept = []
    while match.phase is Phase.PLAYING:
        seen = view(match, match.turn)
        kept.append((seen, repr(seen)))
        match.apply(bots[match.turn].choose(seen))
    for seen, text in kept:
        assert repr(seen) == text  # nothing in a view is shared with the match's lists
