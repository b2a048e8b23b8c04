"""The arena: bots register by name on a Play stream and play the seats they are handed.

A real server on 127.0.0.1 (`serving`) with an arena key; the bots are the
sample arena bot (analysis/arena_bot.py) in threads of this process.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from analysis.remote_play import play_stream
from service.arena import ARENA_KEY_HEADER
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from tests.arena_helpers import ARENA, KEY, arena_bots
from tests.helpers import HANG, wait_until
from tests.service_helpers import (
    RPC_TIMEOUT,
    PlayClient,
    Service,
    assert_refused,
    query,
    serving,
)


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    with serving(tmp_path / "events.duckdb", sync=False, arena_key=KEY.encode()) as service:
        yield service


def listed(svc: Service) -> dict[str, pb.ArenaBot]:
    reply = svc.stub.ListArenaBots(pb.ListArenaBotsRequest(), metadata=ARENA, timeout=RPC_TIMEOUT)
    return {b.name: b for b in reply.bots}


def register_error(svc: Service, name: str, metadata: list[tuple[str, str]]) -> grpc.RpcError:
    try:
        play_stream(svc.stub, [], register=pb.ArenaRegister(name=name), metadata=metadata)
    except grpc.RpcError as exc:
        return exc
    raise AssertionError("the registration should have been refused")


def test_a_registered_bot_is_listed_and_a_second_one_under_its_name_is_refused(
    svc: Service,
) -> None:
    with arena_bots(svc.address, {"alice": "greedy"}):
        assert list(listed(svc)) == ["alice"]
        exc = register_error(svc, "alice", ARENA)
        assert_refused(exc, grpc.StatusCode.ALREADY_EXISTS, "ERROR_REASON_BOT_NAME_TAKEN")
        assert list(listed(svc)) == ["alice"]
    wait_until(lambda: not listed(svc), "the bot's name freed once it left")


def test_a_wrong_or_missing_arena_key_registers_nothing(svc: Service) -> None:
    wrong = register_error(svc, "mallory", [(ARENA_KEY_HEADER, "not-the-key")])
    assert_refused(wrong, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_BAD_ARENA_KEY")
    missing = register_error(svc, "mallory", [])
    assert_refused(missing, grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_BAD_ARENA_KEY")
    assert listed(svc) == {}


def test_a_service_without_an_arena_key_refuses_registration(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as plain:
        exc = register_error(plain, "alice", ARENA)
        assert_refused(exc, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_ARENA_OFF")


def test_a_flood_of_registrations_beyond_the_limit_is_refused_and_the_arena_plays_on(
    svc: Service,
) -> None:
    svc.running.servicer.arena.max_bots = 2
    with arena_bots(svc.address, {"alice": "greedy", "bob": "random"}):
        for i in range(5):
            exc = register_error(svc, f"flood{i}", ARENA)
            assert_refused(exc, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED")
        assert sorted(listed(svc)) == ["alice", "bob"]
        match_id = seat_match(svc, ["alice", "bob"], seed=5)
        wait_over(svc, match_id)


def seat_match(svc: Service, players: list[str], seed: int) -> str:
    """A match whose every seat is the named arena bot's; its id."""
    created = svc.stub.CreateMatch(
        pb.CreateMatchRequest(
            seat_count=len(players), seed=seed, round_limit=1, players=players, run_id="arena-test"
        ),
        timeout=RPC_TIMEOUT,
    )
    seats = [
        pb.ArenaSeat(match_id=created.match_id, token=token, bot=name, bot_seed=seed * 4 + i)
        for i, (name, token) in enumerate(zip(players, created.seat_tokens, strict=True))
    ]
    reply = svc.stub.SeatArenaBots(
        pb.SeatArenaBotsRequest(seats=seats), metadata=ARENA, timeout=RPC_TIMEOUT
    )
    assert reply.handed_seats == len(players)
    return str(created.match_id)


def wait_over(svc: Service, match_id: str) -> None:
    """Wait until the log holds the match's end."""
    sql = "SELECT count(*) AS n FROM events WHERE match_id = ? AND kind = 'match_ended'"
    wait_until(
        lambda: query(svc.stub, sql, match_id).column("n")[0].as_py() == 1,
        f"match {match_id} over",
    )


def test_seats_handed_to_arena_bots_are_played_to_the_end_and_logged_with_their_names(
    svc: Service,
) -> None:
    with arena_bots(svc.address, {"alice": "greedy", "bob": "random"}):
        first = seat_match(svc, ["alice", "bob"], seed=11)
        second = seat_match(svc, ["bob", "alice"], seed=12)
        wait_over(svc, first)
        wait_over(svc, second)
        bots = listed(svc)
        assert bots["alice"].seats_handed == bots["bob"].seats_handed == 2
    sql = "SELECT match_id, players, run_id FROM matches ORDER BY match_id"
    rows = {r["match_id"]: r for r in query(svc.stub, sql).to_pylist()}
    assert rows[first]["players"] == ["alice", "bob"]
    assert rows[second]["players"] == ["bob", "alice"]
    assert rows[first]["run_id"] == "arena-test"


def test_a_seat_handed_to_a_bot_not_connected_hands_nothing(svc: Service) -> None:
    created = svc.stub.CreateMatch(pb.CreateMatchRequest(seat_count=2), timeout=RPC_TIMEOUT)
    with arena_bots(svc.address, {"alice": "greedy"}):
        seats = [
            pb.ArenaSeat(match_id=created.match_id, token=created.seat_tokens[0], bot="alice"),
            pb.ArenaSeat(match_id=created.match_id, token=created.seat_tokens[1], bot="carol"),
        ]
        try:
            svc.stub.SeatArenaBots(
                pb.SeatArenaBotsRequest(seats=seats), metadata=ARENA, timeout=RPC_TIMEOUT
            )
        except grpc.RpcError as exc:
            code = grpc.StatusCode.FAILED_PRECONDITION
            assert_refused(exc, code, "ERROR_REASON_BOT_NOT_CONNECTED", "carol")
        else:
            raise AssertionError("seating a bot not connected should fail")
        assert listed(svc)["alice"].seats_handed == 0


def registered_client(svc: Service, name: str) -> tuple[PlayClient, str]:
    """A bot registered by hand, message by message; and its resume secret."""
    client = PlayClient(
        svc.stub, [], pb.PlayRequest(register=pb.ArenaRegister(name=name)), metadata=ARENA
    )
    registered = client.next("registered")
    assert registered.registered.name == name
    return client, registered.registered.resume_secret


def test_a_bot_that_dropped_gets_its_seats_back_with_its_resume_secret(svc: Service) -> None:
    with arena_bots(svc.address, {"bob": "greedy"}):
        alice, secret = registered_client(svc, "alice")
        match_id = seat_match(svc, ["alice", "bob"], seed=21)
        opened = alice.next("opened")
        assert (opened.match_id, opened.seat) == (match_id, 0)
        assert opened.opened.token  # for the calls beside the stream
        assert opened.opened.bot_seed == 21 * 4
        alice.next("decision")
        alice.call.cancel()  # the bot drops with a decision pending
        alice.ended()
        wait_until(lambda: "alice" not in listed(svc), "alice's drop noticed")
        taken = register_error(svc, "alice", ARENA)  # held for it while its match goes on
        assert_refused(taken, grpc.StatusCode.ALREADY_EXISTS, "ERROR_REASON_BOT_NAME_TAKEN")
        again = PlayClient(
            svc.stub,
            [],
            pb.PlayRequest(register=pb.ArenaRegister(name="alice", resume_secret=secret)),
            metadata=ARENA,
        )
        assert again.next("registered").registered.resume_secret == secret
        assert again.next("opened").match_id == match_id
        pending = again.next("decision")  # the decision it had not answered, once
        again.send(
            pb.PlayAnswer(
                match_id=match_id,
                seat=0,
                move_count=pending.decision.move_count,
                notation=pending.decision.move.moves[0].notation,
            )
        )
        replies: list[pb.PlayUpdate] = []
        while not replies or replies[-1].WhichOneof("kind") not in ("answered", "error"):
            replies.append(again.next())
        assert [u.WhichOneof("kind") for u in replies].count("opened") == 0  # one follower
        assert replies[-1].WhichOneof("kind") == "answered"
        again.call.cancel()
        again.ended()
        wait_until(lambda: "alice" not in listed(svc), "alice's second drop noticed")
        with arena_bots(svc.address, {"alice": "greedy"}, resume={"alice": secret}) as back:
            wait_over(svc, match_id)
            assert back["alice"].resume_secret == secret
        assert "alice" not in listed(svc)


def test_garbage_answers_are_refused_in_band_and_cost_only_their_own_match(
    svc: Service,
) -> None:
    with arena_bots(svc.address, {"alice": "greedy", "bob": "random"}):
        mallory, _ = registered_client(svc, "mallory")
        spoiled = seat_match(svc, ["mallory", "alice"], seed=31)
        decision = mallory.next("decision")
        count = decision.decision.move_count
        for notation, move_count, code in (
            ("9-9@0-0:nowhere", count, grpc.StatusCode.INVALID_ARGUMENT),
            ("draw", count + 7, grpc.StatusCode.ABORTED),
        ):
            mallory.send(
                pb.PlayAnswer(
                    match_id=spoiled, seat=decision.seat, move_count=move_count, notation=notation
                )
            )
            reply = mallory.reply()
            assert reply.WhichOneof("kind") == "error"
            assert reply.error.code == code.value[0]
        fine = seat_match(svc, ["alice", "bob"], seed=32)
        wait_over(svc, fine)
        assert sorted(listed(svc)) == ["alice", "bob", "mallory"]
        mallory.close()
        assert mallory.ended() is None


@pytest.mark.slow
def test_sniff_arena_bot_registers_and_plays_and_a_wrong_key_is_one_line(
    svc: Service, tmp_path: Path
) -> None:
    sniff = Path(sys.executable).parent / "sniff"
    key_file, wrong_file = tmp_path / "arena.key", tmp_path / "wrong.key"
    key_file.write_text(KEY + "\n")
    wrong_file.write_text("not-the-key")
    argv = [str(sniff), "arena-bot", "--server", svc.address, "--name", "carol", "--bot"]
    refused = subprocess.run(
        [*argv, "random", "--arena-key-file", str(wrong_file)],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1].startswith("Error: the arena refused carol")
    assert "PERMISSION_DENIED" in refused.stderr
    bot = subprocess.Popen([*argv, "random", "--arena-key-file", str(key_file)])
    try:
        wait_until(lambda: "carol" in listed(svc), "carol registered")
        with arena_bots(svc.address, {"alice": "greedy"}):
            wait_over(svc, seat_match(svc, ["carol", "alice"], seed=41))
    finally:
        bot.send_signal(signal.SIGINT)
        assert bot.wait(timeout=HANG) == 0


def test_a_late_answer_for_a_finished_match_is_told_it_is_over_and_the_bot_plays_on(
    svc: Service,
) -> None:
    with arena_bots(svc.address, {"alice": "greedy"}):
        mallory, _ = registered_client(svc, "mallory")
        match_id = seat_match(svc, ["mallory", "alice"], seed=51)
        last = 0
        while True:  # play every decision with the first legal move, to the match's end
            update = mallory.next()
            kind = update.WhichOneof("kind")
            if kind == "event" and update.event.WhichOneof("kind") == "match_ended":
                break
            if kind == "decision":
                last = update.decision.move_count
                answer = pb.PlayAnswer(match_id=match_id, seat=0, move_count=last)
                if update.decision.WhichOneof("kind") == "deal":
                    answer.deal.round_index = update.decision.deal.round_index
                else:
                    answer.notation = update.decision.move.moves[0].notation
                mallory.send(answer)
        mallory.send(pb.PlayAnswer(match_id=match_id, seat=0, move_count=last, notation="draw"))
        reply = mallory.reply()
        while reply.WhichOneof("kind") == "answered":  # the answers sent before the end
            reply = mallory.reply()
        assert reply.WhichOneof("kind") == "error"
        assert reply.error.reason == pb.ERROR_REASON_WRONG_PHASE, reply.error
        second = seat_match(svc, ["mallory", "alice"], seed=52)  # the stream plays on
        assert mallory.next("opened").match_id == second
        mallory.close()
        assert mallory.ended() is None
