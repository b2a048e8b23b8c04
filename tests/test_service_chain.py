"""Every seat gets the chain's head at each round end and at the match end, the commitment
at creation and the reveal at the end, and they agree with the log (docs/chain.md)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analysis.cli.main import cli
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage import chain
from sniff.dealing import lot, shuffled_tiles
from sniff.rules import HAND_SIZE
from sniff.tiles import NAMES
from tests.service_helpers import (
    MAX_ACTIONS,
    RPC_TIMEOUT,
    Stub,
    create,
    play_step,
    play_to_end,
    query,
    serving,
    state,
)

HEX64 = 64


def log_rows(stub: Stub, match_id: str) -> list[dict[str, Any]]:
    table = query(
        stub,
        "SELECT match_id, seq, kind, round, action_index, seat, move, drawn, points, ends_sum,"
        " CAST(detail AS VARCHAR) AS detail, hash FROM events_all WHERE match_id = ? ORDER BY seq",
        match_id,
    )
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


@pytest.mark.slow
def test_the_seats_get_the_head_of_every_round_end_and_of_the_match_end(tmp_path: Path) -> None:
    with serving(tmp_path / "log.duckdb") as service:
        stub = service.stub
        created = create(stub, 3, seed=41)
        assert len(created.seed_commitment) == HEX64
        played = play_to_end(stub, created, random.Random(3))
        rows = log_rows(stub, created.match_id)
        by_seq = {r["seq"]: r for r in rows}
        enders = [r for r in played.replies if r.HasField("round_end") or r.HasField("match_end")]
        assert enders, "a match has at least its end"
        for reply in played.replies:
            if reply in enders:
                assert len(reply.chain_head) == HEX64
            else:
                assert reply.chain_head == ""  # mid-round: no head
        ends = [r for r in rows if r["kind"] in ("round_ended", "match_ended")]
        # round_ended then match_ended of a round-limit match come from one reply; here the
        # match is won on a placement, so each ender wrote exactly one of them
        assert [r.chain_head for r in enders] == [bytes(e["hash"]).hex() for e in ends]

        # the same heads on the event stream
        events = list(
            stub.WatchMatch(
                pb.WatchMatchRequest(match_id=created.match_id, token=created.seat_tokens[1]),
                timeout=RPC_TIMEOUT,
            )
        )
        for item in events:
            kind = item.event.WhichOneof("kind")
            expected = (
                bytes(by_seq[item.event.sequence]["hash"]).hex()
                if kind in ("round_ended", "match_ended")
                else ""
            )
            assert item.event.chain_head == expected, kind
        assert events[0].event.match_created.seed_commitment == created.seed_commitment

        # GetScores and GetState give the last head, with its sequence number
        scores = stub.GetScores(
            pb.GetScoresRequest(match_id=created.match_id, token=created.seat_tokens[0]),
            timeout=RPC_TIMEOUT,
        )
        last = rows[-1]
        assert (scores.chain_head, scores.chain_head_sequence) == (
            bytes(last["hash"]).hex(),
            last["seq"],
        )
        st = state(stub, created.match_id, created.seat_tokens[2])
        assert (st.chain_head, st.chain_head_sequence) == (
            scores.chain_head,
            scores.chain_head_sequence,
        )
        assert st.seed_commitment == created.seed_commitment
        assert st.HasField("reveal")


@pytest.mark.slow
def test_apply_move_gives_its_head_with_the_sequence_get_scores_get_state_and_the_stream_give(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    with serving(db) as service:
        stub = service.stub
        # a round limit: the last reply writes both a round end and the match end
        request = pb.CreateMatchRequest(seat_count=2, seed=77, round_limit=3)
        created = stub.CreateMatch(request, timeout=RPC_TIMEOUT)
        rng = random.Random(6)
        given: list[tuple[str, int]] = []
        for _ in range(MAX_ACTIONS):
            reply = play_step(stub, created, rng)
            if reply is None:
                break
            if not reply.chain_head:
                assert reply.chain_head_sequence == 0  # mid-round: no head, no sequence
                continue
            head = (reply.chain_head, reply.chain_head_sequence)
            scores = stub.GetScores(
                pb.GetScoresRequest(match_id=created.match_id, token=created.seat_tokens[0]),
                timeout=RPC_TIMEOUT,
            )
            assert (scores.chain_head, scores.chain_head_sequence) == head
            st = state(stub, created.match_id, created.seat_tokens[1])
            assert (st.chain_head, st.chain_head_sequence) == head
            given.append(head)
        assert len(given) == 3  # two round ends, then the third round's and the match's end
        stream = {
            item.event.sequence: (item.event.WhichOneof("kind"), item.event.chain_head)
            for item in stub.WatchMatch(
                pb.WatchMatchRequest(match_id=created.match_id, token=created.seat_tokens[0]),
                timeout=RPC_TIMEOUT,
            )
        }
        assert [stream[seq] for _, seq in given] == [
            ("round_ended", given[0][0]),
            ("round_ended", given[1][0]),
            ("match_ended", given[2][0]),
        ]
        assert given[-1][1] == max(stream)
        kept = [arg for head, _ in given for arg in ("--head", f"{created.match_id}={head}")]
        done = CliRunner().invoke(
            cli, ["audit", "--db", str(db), "--workers", "1", created.match_id, *kept]
        )
        assert done.exit_code == 0, done.output
        assert done.output == f"{created.match_id}: ok\n"


@pytest.mark.slow
def test_the_reveal_opens_the_commitment_and_recomputes_the_chain_and_every_deal(
    tmp_path: Path,
) -> None:
    with serving(tmp_path / "log.duckdb") as service:
        stub = service.stub
        created = create(stub, 2, seed=2**64 - 1)
        played = play_to_end(stub, created, random.Random(8))
        reveal = played.replies[-1].match_end.reveal
        assert reveal.seed == 2**64 - 1
        salt, secret = bytes.fromhex(reveal.seed_salt), bytes.fromhex(reveal.chain_secret)
        assert chain.commitment(reveal.seed, salt).hex() == created.seed_commitment
        rows = log_rows(stub, created.match_id)
        contents = [chain.row_content(tuple(r.values())) for r in rows]
        assert [h.hex() for h in chain.chain(contents, secret)] == [
            bytes(r["hash"]).hex() for r in rows
        ]
        assert played.replies[-1].chain_head == bytes(rows[-1]["hash"]).hex()
        # every deal is the seed's (docs/dealing.md), the lot where a lot was drawn
        events = stub.WatchMatch(
            pb.WatchMatchRequest(match_id=created.match_id, token=created.observer_token),
            timeout=RPC_TIMEOUT,
        )
        dealt = [e.event.round_dealt for e in events if e.event.HasField("round_dealt")]
        assert dealt
        size = HAND_SIZE[2]
        for deal in dealt:
            tiles = [NAMES[t] for t in shuffled_tiles(reveal.seed, deal.round_index)]
            hands = [[f"{t.low}-{t.high}" for t in h.tiles] for h in deal.hands]
            assert hands == [tiles[:size], tiles[size : 2 * size]]
            assert [f"{t.low}-{t.high}" for t in deal.boneyard_tiles] == tiles[2 * size :]
            assert not deal.explicit_deal
            if deal.leader_choice == pb.LEADER_CHOICE_LOT:
                assert deal.leader == lot(reveal.seed, deal.round_index, 2)


@pytest.mark.slow
def test_nothing_is_revealed_while_the_match_is_in_play(tmp_path: Path) -> None:
    with serving(tmp_path / "log.duckdb") as service:
        stub = service.stub
        created = create(stub, 2, seed=5)
        for _ in range(3):
            play_step(stub, created, random.Random(1))
        st = state(stub, created.match_id, created.observer_token)
        assert not st.HasField("reveal")
        assert st.chain_head == ""
        plain = query(
            stub,
            "SELECT detail ->> '$.seed' AS seed, detail ->> '$.seed_salt' AS salt,"
            " detail ->> '$.chain_secret' AS secret, detail ->> '$.seed_commitment' AS c,"
            " hash FROM events WHERE match_id = ? AND seq = 0",
            created.match_id,
        ).to_pylist()
        assert plain == [
            {"seed": None, "salt": None, "secret": None, "c": created.seed_commitment, "hash": None}
        ]


@pytest.mark.slow
def test_a_retried_round_ending_move_gets_the_same_head_also_after_a_restart(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.duckdb"
    with serving(db) as service:
        stub = service.stub
        created = create(stub, 2, seed=12)
        rng = random.Random(4)
        ender = None
        requests = []
        while ender is None:
            st = state(stub, created.match_id, created.observer_token)
            reply = play_step(stub, created, rng)
            assert reply is not None
            requests.append((st.move_count, reply))
            if reply.HasField("round_end") or reply.HasField("match_end"):
                ender = reply
        count, _ = requests[-1]
    with serving(db) as service:
        again = service.stub.ApplyMove(
            pb.ApplyMoveRequest(
                match_id=created.match_id,
                token=created.seat_tokens[ender.seat],
                seat=ender.seat,
                notation=ender.move.notation,
                expected_move_count=count,
            ),
            timeout=RPC_TIMEOUT,
        )
        assert again.chain_head == ender.chain_head
        assert again.chain_head_sequence == ender.chain_head_sequence > 0
        assert len(again.chain_head) == HEX64


@pytest.mark.slow
def test_an_explicit_deal_is_marked_on_the_stream(tmp_path: Path) -> None:
    hands = ["1-4 4-4 1-2 5-5 1-3 2-2 6-6", "1-1 3-4 1-5 0-5 0-0 2-3 3-6"]
    boneyard = "0-1 0-2 0-3 0-4 0-6 1-6 2-4 2-5 2-6 3-3 3-5 4-5 4-6 5-6"

    def tiles(text: str) -> list[pb.Tile]:
        return [pb.Tile(low=int(t[0]), high=int(t[2])) for t in text.split()]

    deal = pb.Deal(hands=[pb.Hand(tiles=tiles(h)) for h in hands], boneyard_tiles=tiles(boneyard))
    with serving(tmp_path / "log.duckdb") as service:
        created = service.stub.CreateMatch(
            pb.CreateMatchRequest(seat_count=2, seed=3, first_deal=deal), timeout=RPC_TIMEOUT
        )
        events = service.stub.WatchMatch(
            pb.WatchMatchRequest(match_id=created.match_id, token=created.observer_token),
            timeout=RPC_TIMEOUT,
        )
        first = next(
            item.event.round_dealt for item in events if item.event.HasField("round_dealt")
        )
        events.cancel()
        assert first.explicit_deal
        settings = query(
            service.stub,
            "SELECT explicit_deals FROM matches WHERE match_id = ?",
            created.match_id,
        ).to_pylist()
        assert settings == [{"explicit_deals": True}]
