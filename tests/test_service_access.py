"""Who may create matches: the house key, the limit on matches in play.

Real server (in-process, 127.0.0.1, port 0), real channels, real DuckDB file.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.rpc.servicer import HOUSE_KEY_HEADER
from tests.service_helpers import (
    Service,
    assert_refused,
    error_info,
    play_to_end,
    query,
    rpc_error,
    serving,
)

KEY = b"the-house-key-0123456789"
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
PERMISSION_DENIED = grpc.StatusCode.PERMISSION_DENIED


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[Service]:
    with serving(tmp_path / "events.duckdb", house_key=KEY) as service:
        yield service


def with_key(key: bytes | str) -> list[tuple[str, str]]:
    return [(HOUSE_KEY_HEADER, key.decode() if isinstance(key, bytes) else key)]


def event_total(service: Service) -> int:
    return int(query(service.stub, "SELECT count(*) AS n FROM events").column("n")[0].as_py())


@pytest.mark.slow
def test_create_match_needs_the_house_key(keyed: Service) -> None:
    stub = keyed.stub
    request = pb.CreateMatchRequest(seat_count=2, seed=1)
    exc = rpc_error(stub.CreateMatch, request)
    assert_refused(exc, UNAUTHENTICATED, "ERROR_REASON_BAD_HOUSE_KEY", HOUSE_KEY_HEADER)
    for wrong in ("", "x", KEY.decode()[:-1], KEY.decode() + "x", KEY.decode().upper()):
        exc = rpc_error(stub.CreateMatch, request, metadata=with_key(wrong))
        assert_refused(exc, PERMISSION_DENIED, "ERROR_REASON_BAD_HOUSE_KEY")
    assert event_total(keyed) == 0  # nothing was created
    created = stub.CreateMatch(request, metadata=with_key(KEY), timeout=10)
    assert len(created.seat_tokens) == 2


@pytest.mark.slow
def test_an_explicit_deal_needs_the_house_key_and_a_seeded_deal_does_not(keyed: Service) -> None:
    stub = keyed.stub
    created = stub.CreateMatch(
        pb.CreateMatchRequest(seat_count=2, seed=3, target=20), metadata=with_key(KEY), timeout=10
    )
    play_to_end(stub, created, random.Random(3))  # seeded deals by the token holders: no key
    fresh = stub.CreateMatch(
        pb.CreateMatchRequest(seat_count=2, seed=4), metadata=with_key(KEY), timeout=10
    )
    explicit = pb.DealRoundRequest(
        match_id=fresh.match_id, token=fresh.observer_token, deal=pb.Deal(leader=0)
    )
    exc = rpc_error(stub.DealRound, explicit)
    assert_refused(exc, UNAUTHENTICATED, "ERROR_REASON_BAD_HOUSE_KEY")
    exc = rpc_error(stub.DealRound, explicit, metadata=with_key("nope"))
    assert_refused(exc, PERMISSION_DENIED, "ERROR_REASON_BAD_HOUSE_KEY")
    # With the key, the deal is judged on its merits (a round is in play).
    exc = rpc_error(stub.DealRound, explicit, metadata=with_key(KEY))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_a_service_without_a_house_key_ignores_the_header(tmp_path: Path) -> None:
    with serving(tmp_path / "events.duckdb") as service:
        request = pb.CreateMatchRequest(seat_count=3, seed=1)
        assert service.stub.CreateMatch(request, timeout=10).match_id
        assert service.stub.CreateMatch(request, metadata=with_key("x"), timeout=10).match_id


@pytest.mark.slow
def test_matches_in_play_are_bounded_and_a_finished_match_frees_its_place(
    tmp_path: Path,
) -> None:
    with serving(tmp_path / "events.duckdb", max_live_matches=2) as service:
        stub = service.stub
        first = stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=1, target=20))
        stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=2))
        exc = rpc_error(stub.CreateMatch, pb.CreateMatchRequest(seat_count=2, seed=3))
        assert_refused(
            exc, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_REACHED", "in play"
        )
        assert error_info(exc).metadata["limit"] == "max_live_matches"
        assert event_total(service) == 4  # two matches: created and dealt
        play_to_end(stub, first, random.Random(1))
        assert stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=3), timeout=10).match_id


def sniff(*args: str) -> subprocess.CompletedProcess[str]:
    sniff_bin = Path(sys.executable).parent / "sniff"
    return subprocess.run(
        [str(sniff_bin), *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--house-key-file", "/nonexistent/key"], "--house-key-file"),
        (["--tls-cert", "/nonexistent/cert"], "--tls-key"),
        (["--max-live-matches", "0"], "--max-live-matches"),
    ],
)
def test_serve_refuses_bad_access_options_in_one_line(
    tmp_path: Path, args: list[str], words: str
) -> None:
    done = sniff("serve", "--port", "0", "--db", str(tmp_path / "x.duckdb"), *args)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.slow
def test_serve_refuses_an_empty_house_key_file(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("  \n")
    done = sniff(
        "serve", "--port", "0", "--db", str(tmp_path / "x.duckdb"), "--house-key-file", str(key)
    )
    assert done.returncode == 2
    assert "empty" in done.stderr
