"""A Play client that never reads cannot make the service hold more for it than one bounded
queue: the stream is ended with RESOURCE_EXHAUSTED, and its match waits for a new stream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.play_stream import PLAY_QUEUE
from tests.helpers import HANG, wait_until
from tests.service_helpers import (
    PlayClient,
    Stub,
    assert_refused,
    create,
    error_info,
    play_seat,
    serving,
)

MAX_ANSWERS = 200_000
"""More answers than a client could have queued before the service stops reading them."""
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 8192)]
"""A client that buffers little of what it does not read (as a slow client on a slow link):
the service's writes then wait at once, instead of after megabytes gRPC would buffer."""


@pytest.mark.slow
def test_a_client_that_never_reads_is_ended_with_resource_exhausted(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb", sync=False) as svc:
        plays = svc.running.servicer.plays
        created = create(svc.stub, 2, seed=3)
        sent = 0

        def spam() -> Iterator[pb.PlayRequest]:
            """Answers with a stale count, each refused in-band: one update each, never read."""
            nonlocal sent
            seats = [play_seat(created.match_id, t) for t in created.seat_tokens]
            yield pb.PlayRequest(open=pb.PlayOpen(seats=seats))
            stale = pb.PlayAnswer(match_id=created.match_id, move_count=999, notation="draw")
            for _ in range(MAX_ANSWERS):
                sent += 1
                yield pb.PlayRequest(answer=stale)

        with grpc.insecure_channel(svc.address, options=SMALL_WINDOW) as channel:
            call = Stub(channel).Play(spam(), timeout=HANG)
            wait_until(lambda: plays.total == 1, "the stream to open")
            wait_until(lambda: plays.total == 0, "the service to end the unread stream")
            assert sent < MAX_ANSWERS  # it stopped reading the client, too
            received: list[pb.PlayUpdate] = []
            with pytest.raises(grpc.RpcError) as raised:
                received.extend(u for response in call for u in response.updates)
            assert_refused(
                raised.value, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED"
            )
            assert error_info(raised.value).metadata["limit"] == "play_queue"
            assert len(received) < 2 * PLAY_QUEUE  # what was sent before the writes waited
        assert not plays.per_seat
        # Nothing was applied, and a new stream takes the match up where it was.
        client = PlayClient(svc.stub, [play_seat(created.match_id, t) for t in created.seat_tokens])
        decision = client.next("decision").decision
        assert decision.move_count == 0
        client.close()
        assert client.ended() is None
