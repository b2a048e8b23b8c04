"""A full disk: a clean refusal, nothing lost, the match unchanged, play resumes once freed.

The log lives on a small tmpfs of its own (this test mounts one; CI runs as
root). Where mounting is not allowed (or SNIFF_TEST_NO_MOUNT=1), the same
path is driven by making the journal's lowest write, `os.write` as
`service.storage.journal` calls it, fail with ENOSPC, which is what a full
disk does to it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from service.storage import EventLog
from tests.service_helpers import Service, assert_refused, create, serving, state

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def small_disk(path: Path) -> Iterator[bool]:
    """Mount a 64 MiB tmpfs at `path`; yields False (nothing mounted) where not allowed."""
    path.mkdir()
    mounted = False
    if os.environ.get("SNIFF_TEST_NO_MOUNT") != "1":
        with contextlib.suppress(OSError):
            mounted = (
                subprocess.run(
                    ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(path)],
                    capture_output=True,
                    check=False,
                ).returncode
                == 0
            )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path) -> Path:
    """Fill the file system of `directory` to the last byte; return the filler."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 4096, 512, 64, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def next_change(svc: Service, created: pb.CreateMatchResponse) -> tuple[Any, Any]:
    """The next change to the match: (the stub method, its request): a deal or a move."""
    st = state(svc.stub, created.match_id, created.observer_token)
    if st.phase == pb.MATCH_PHASE_AWAITING_DEAL:
        deal = pb.DealRoundRequest(match_id=created.match_id, token=created.observer_token)
        return svc.stub.DealRound, deal
    seat = st.turn
    moves = svc.stub.ListLegalMoves(
        pb.ListLegalMovesRequest(
            match_id=created.match_id, token=created.seat_tokens[seat], seat=seat
        ),
        timeout=10,
    ).moves
    move = pb.ApplyMoveRequest(
        match_id=created.match_id,
        token=created.seat_tokens[seat],
        seat=seat,
        notation=moves[0].notation,
        expected_move_count=st.move_count,
    )
    return svc.stub.ApplyMove, move


def after_events(svc: Service, created: pb.CreateMatchResponse) -> int:
    """How many events the match has in memory (what watchers are sent)."""
    return len(svc.running.hub.get(created.match_id).events)


def test_a_full_disk_refuses_moves_cleanly_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with small_disk(tmp_path / "disk") as mounted:
        db = tmp_path / "disk" / "events.duckdb"
        with serving(db) as svc:
            created = create(svc.stub, 2, seed=21, target=10_000)
            for _ in range(5):
                method, request = next_change(svc, created)
                method(request, timeout=10)
            filler: Path | None = None
            if mounted:
                filler = fill(db.parent)
            else:
                real_write = os.write

                def no_space(fd: int, data: Any) -> int:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

                monkeypatch.setattr("service.storage.journal.os.write", no_space)
            # The last free bytes of a page may still take a move or two: go on until refused.
            refused: grpc.RpcError | None = None
            for _ in range(500):
                method, request = next_change(svc, created)
                before = state(svc.stub, created.match_id, created.observer_token)
                try:
                    method(request, timeout=10)
                except grpc.RpcError as exc:
                    refused = exc
                    break
            assert refused is not None, "the full disk never refused a move"
            assert_refused(
                refused, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_STORAGE_FULL", "full"
            )
            assert state(svc.stub, created.match_id, created.observer_token) == before
            create_refused: grpc.RpcError | None = None
            try:
                svc.stub.CreateMatch(pb.CreateMatchRequest(seat_count=2, seed=5), timeout=10)
            except grpc.RpcError as e:
                create_refused = e
            assert create_refused is not None
            assert_refused(
                create_refused, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_STORAGE_FULL"
            )
            # Space comes back: the same request now succeeds.
            if filler is not None:
                filler.unlink()
            else:
                monkeypatch.setattr("service.storage.journal.os.write", real_write)
            method(request, timeout=10)
            after = state(svc.stub, created.match_id, created.observer_token)
            assert (after.move_count, after.round_index) != (before.move_count, before.round_index)
            seen = svc.stub.WatchMatch(
                pb.WatchMatchRequest(match_id=created.match_id, token=created.observer_token),
                timeout=10,
            )
            acknowledged = []
            for item in seen:
                acknowledged.append(item.event.sequence)
                if len(acknowledged) == after_events(svc, created):
                    seen.cancel()
                    break
        # Every acknowledged event is in the log, each once, without a gap.
        with EventLog(db) as log:
            seqs = (
                log.query(
                    "SELECT seq FROM events WHERE match_id = ? ORDER BY seq", [created.match_id]
                )
                .column("seq")
                .to_pylist()
            )
        assert seqs == acknowledged == list(range(len(seqs)))
