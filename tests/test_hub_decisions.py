"""A match's decision is read once per durable change and shared by every stream following
it (`Hub.decided`), and what the shortcut carries is what the view itself says: the layout's
sides read from the match equal those of the layout rebuilt from the view's placements, so a
Play decision's state is the GetState one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from service.hub import DEALING_SEAT, Hub, LiveMatch, Pending
from service.rpc import convert
from service.storage import EventLog
from sniff import Phase, view
from sniff.variants import VARIANTS


def _fresh(pending: Pending) -> Pending:
    """The decision as the hub reads it without the shortcut: from the match's own view."""
    assert pending.view is not None
    layout = pending.view.layout
    sides = (layout.open_sides(), layout.counted_ends())
    return Pending(
        pending.move_count,
        pending.events,
        pending.deal_round,
        pending.view,
        pending.choice,
        pending.proof,
        pending.moves,
        sides,
    )


def _check_decision(hub: Hub, live: LiveMatch) -> Pending | None:
    """Every seat's decision as `decided` says it, checked against `pending` and the view."""
    match = live.match
    decided = None
    for seat in range(match.seats):
        known, shared = hub.decided(live, seat)
        assert known, "a followed match's decision is read before its followers hear of it"
        assert shared is hub.pending(live, seat)
        if match.phase is Phase.PLAYING and seat == match.turn:
            assert shared is not None
            assert shared.view is not None
            assert shared.proof is not None
            assert shared.view == view(match, seat)
            assert shared.moves == tuple(match.legal_moves())
            assert shared.sides == _fresh(shared).sides
            state = convert.state_pb(live.match_id, shared.view, shared.choice, shared.proof)
            assert (
                convert.state_pb(
                    live.match_id, shared.view, shared.choice, shared.proof, shared.sides
                )
                == state
            )
            decided = shared
        elif match.phase is Phase.AWAITING_DEAL and seat == DEALING_SEAT:
            assert shared is not None
            assert shared.deal_round == match.round_index + 1
            decided = shared
        else:
            assert shared is None
    return decided


@pytest.mark.parametrize("seats", [2, 4])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_followed_match_s_decision_is_the_one_each_seat_would_read(
    tmp_path: Path, seats: int, variant: str
) -> None:
    rng = random.Random(seats)
    with EventLog(tmp_path / "log.duckdb", sync=False) as log:
        hub = Hub(log)
        made = hub.create(seats, seed=7, target=60, variant=VARIANTS[variant])
        live = hub.get(made.match_id)
        hub.listen(live, lambda: None)
        hub.pending(live, 0)  # the first deal's decision, read as a stream opening reads it
        while live.match.phase is not Phase.OVER:
            decision = _check_decision(hub, live)
            assert decision is not None
            if decision.deal_round is not None:
                hub.deal_round(made.match_id, made.seat_tokens[0], decision.deal_round)
                continue
            seat = live.match.turn
            assert seat is not None
            move = rng.choice(decision.moves)
            hub.apply(made.match_id, made.seat_tokens[seat], seat, move, decision.move_count)
        assert _check_decision(hub, live) is None


def test_a_decision_read_before_a_change_is_not_taken_for_the_next(tmp_path: Path) -> None:
    with EventLog(tmp_path / "log.duckdb", sync=False) as log:
        hub = Hub(log)
        made = hub.create(2, seed=3)
        live = hub.get(made.match_id)
        seat = live.match.turn
        assert seat is not None
        before = hub.pending(live, seat)
        assert before is not None
        assert hub.decided(live, seat) == (True, before)
        move = before.moves[0]
        hub.apply(made.match_id, made.seat_tokens[seat], seat, move, before.move_count)
        # Nobody follows the match: the apply read no decision, and the one read before it
        # is stale.
        assert hub.decided(live, seat) == (False, None)
        after = hub.pending(live, live.match.turn)
        assert after is not None
        assert after.move_count == before.move_count + 1
        assert hub.decided(live, live.match.turn) == (True, after)
