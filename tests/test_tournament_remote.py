"""`sniff tournament --remote`: remote bots seated through the arena, local ones over Play.

A real server on 127.0.0.1 with an arena key; the remote bots are the sample
arena bot in threads. The bots are seeded as in process, so a tournament
through the arena plays the very moves of the same tournament in process.
"""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pyarrow as pa
import pytest
from click.testing import CliRunner

from analysis.arena_bot import ArenaBotState, bot_factory, run_arena_bot
from analysis.bot_matches import play_bots
from analysis.cli.main import cli
from analysis.stats.sprt import Sprt
from analysis.tournament import Played, SeedsCommitment, Settings, play, report
from analysis.tournament_remote import ArenaServer, play_remote
from service.clock import OutOfTime, TimeControl
from service.match_recorder import EventRecorder
from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
from sniff import Move, make_bot
from sniff.bots import PlayerView
from sniff.seeds import rotation_bot_seed
from tests.arena_helpers import ARENA, KEY, arena_bots
from tests.helpers import HANG, wait_until
from tests.service_helpers import ServerProcess, Service, Stub, query, serving


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    with serving(tmp_path / "events.duckdb", sync=False, arena_key=KEY.encode()) as service:
        yield service


def logged_moves(svc: Service, match_id: str) -> list[str]:
    sql = "SELECT move FROM events WHERE match_id = ? AND kind = 'action' ORDER BY seq"
    return [str(m) for m in query(svc.stub, sql, match_id).column("move").to_pylist()]


def in_process_moves(table: pa.Table, match_id: str) -> list[str]:
    rows = table.filter(pa.compute.equal(table["match_id"], match_id)).to_pylist()
    return [r["move"] for r in sorted(rows, key=lambda r: r["seq"]) if r["kind"] == "action"]


def same_tournament(
    svc: Service, remote: dict[str, str], local: tuple[str, ...], seats: int, deals: int
) -> None:
    """The tournament through the arena and in process: the same matches, move for move."""
    bots = (*remote, *local)
    base = Settings(bots, seats, deals, seed=70, round_limit=1, target=10_000)
    committed = SeedsCommitment.new(base)
    through = Settings(bots, seats, deals, 70, round_limit=1, target=10_000, remote=(*remote,))
    with arena_bots(svc.address, remote):
        played = play_remote(through, tuple(remote), ArenaServer(svc.address, KEY), committed)
    expected, table = play(base, committed=committed)
    key = [(p.deal, p.rotation, p.players, p.teams, p.scores, p.rounds, p.actions) for p in played]
    assert key == [
        (p.deal, p.rotation, p.players, p.teams, p.scores, p.rounds, p.actions) for p in expected
    ]
    for got, want in zip(played, expected, strict=True):
        assert logged_moves(svc, got.match_id) == in_process_moves(table, want.match_id)
    assert report(through, played).bots[0]["mean"] == report(base, expected).bots[0]["mean"]
    sql = "SELECT match_id, players, run_id FROM matches"
    logged = {r["match_id"]: r for r in query(svc.stub, sql).to_pylist()}
    for p in played:
        assert logged[p.match_id]["players"] == list(p.players)
        assert logged[p.match_id]["run_id"] == through.id


def test_a_remote_and_a_local_bot_play_the_moves_they_play_in_process(svc: Service) -> None:
    same_tournament(svc, {"greedy": "greedy"}, ("random",), seats=2, deals=3)


def test_partners_through_the_arena_play_the_moves_they_play_in_process(svc: Service) -> None:
    """At 4 seats each bot holds both seats of its side: the arena hands a bot two seats of
    one match, on its one stream."""
    same_tournament(svc, {"greedy": "greedy", "random": "random"}, (), seats=4, deals=2)


def test_two_remote_bots_and_a_local_one_play_the_moves_they_play_in_process(
    svc: Service,
) -> None:
    same_tournament(svc, {"greedy": "greedy", "random": "random"}, ("rollout",), seats=3, deals=2)


def test_only_remote_bots_under_any_names_play_the_seeded_moves(svc: Service) -> None:
    """Remote bots are seated by name: alice plays greedy's moves, bob random's."""
    with arena_bots(svc.address, {"alice": "greedy", "bob": "random"}):
        through = Settings(("alice", "bob"), 2, 2, 5, round_limit=1, remote=("alice", "bob"))
        committed = SeedsCommitment.new(through)
        played = play_remote(through, ("alice", "bob"), ArenaServer(svc.address, KEY), committed)
    base = Settings(("greedy", "random"), 2, 2, 5, round_limit=1)
    expected, _ = play(base, committed=committed)
    assert [(p.scores, p.actions) for p in played] == [(p.scores, p.actions) for p in expected]
    names = {"alice": "greedy", "bob": "random"}
    assert [tuple(names[n] for n in p.players) for p in played] == [p.players for p in expected]


def test_a_sequential_test_through_the_arena_stops_at_the_deal_it_stops_in_process(
    svc: Service,
) -> None:
    base = Settings(("greedy", "random"), 2, 200, 3, round_limit=1, sprt=Sprt(0, 300))
    through = replace(base, remote=("greedy",))
    committed = SeedsCommitment.new(base)
    with arena_bots(svc.address, {"greedy": "greedy"}):
        played = play_remote(through, ("greedy",), ArenaServer(svc.address, KEY), committed)
    expected, _ = play(base, committed=committed)
    assert len(played) == len(expected) < 2 * base.deals
    outcome = report(through, played).sprt
    assert outcome is not None
    assert outcome.decision is not None
    assert outcome == report(base, expected).sprt


def test_the_command_plays_through_the_arena_and_watches_the_standings(
    svc: Service, tmp_path: Path
) -> None:
    key_file = tmp_path / "arena.key"
    key_file.write_text(KEY)
    with arena_bots(svc.address, {"alice": "greedy"}):
        result = CliRunner().invoke(
            cli,
            [
                "tournament", "--remote", "alice", "--bots", "random", "--server", svc.address,
                "--arena-key-file", str(key_file), "--deals", "3", "--round-limit", "1",
                "--format", "json", "--watch",
            ],
            catch_exceptions=False,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["bots"] == ["alice", "random"]
    assert doc["matches"] == 6
    assert [r["bot"] for r in doc["results"]] == ["alice", "random"]
    assert result.stderr.count("after ") == 3  # the standings after each deal
    assert "after 3 of 3 deals (6 matches)" in result.stderr


def test_a_remote_bot_that_is_not_connected_stops_the_command_with_a_clear_line(
    svc: Service, tmp_path: Path
) -> None:
    key_file = tmp_path / "arena.key"
    key_file.write_text(KEY)
    result = CliRunner().invoke(
        cli,
        [
            "tournament", "--remote", "nobody", "--bots", "random", "--server", svc.address,
            "--arena-key-file", str(key_file), "--deals", "1", "--wait", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "nobody" in result.stderr
    assert "to connect to the arena" in result.stderr


class KillingBot:
    """A greedy bot that, once `armed`, SIGKILLs the service at its next decision and starts
    it again on the same log and port: a kill in the middle of a match."""

    name = "greedy"

    def __init__(self, seed: int | None, server: ServerProcess, armed: threading.Event) -> None:
        self.inner = make_bot("greedy", seed)
        self.server = server
        self.armed = armed

    def choose(self, view: PlayerView) -> Move:
        if self.armed.is_set():
            self.armed.clear()
            assert self.server.proc is not None
            self.server.proc.send_signal(signal.SIGKILL)
            self.server.proc.wait(timeout=HANG)
            threading.Thread(target=self.server.start, kwargs={"same_port": True}).start()
        return self.inner.choose(view)


@pytest.mark.slow
def test_a_tournament_whose_server_is_killed_mid_match_resumes_once_it_is_back(
    tmp_path: Path,
) -> None:
    """SIGKILL the service in the middle of the second deal, start it again on the same log
    and port: the bots register again, the unfinished matches go on from the log, and every
    deal is played and logged once."""
    key_file = tmp_path / "arena.key"
    key_file.write_text(KEY)
    server = ServerProcess(
        tmp_path / "events.duckdb", tmp_path, args=("--arena-key-file", str(key_file), "--no-fsync")
    )
    deals = 4
    settings = Settings(
        ("alice", "bob", "random"), 3, deals, 9, round_limit=2, remote=("alice", "bob")
    )
    armed = threading.Event()

    def arm(played: Sequence[Played]) -> None:
        if len(played) == 3:  # the first two deals are over: kill during the next two
            armed.set()

    try:
        server.start()
        killer = functools.partial(KillingBot, server=server, armed=armed)
        with arena_bots(server.address, {"alice": killer, "bob": "random"}) as states:
            played = play_remote(
                settings,
                ("alice", "bob"),
                ArenaServer(server.address, KEY, wait_seconds=HANG),
                SeedsCommitment.new(settings),
                on_deal=arm,
                deals_at_once=2,
            )
            assert all(s.registrations == 2 for s in states.values())  # again after the kill
        assert not armed.is_set()  # the kill happened
        assert sorted((p.deal, p.rotation) for p in played) == [
            (d, r) for d in range(deals) for r in range(3)
        ]
        stub = Stub(grpc.insecure_channel(server.address), server.query_token)
        sql = (
            "SELECT match_id, players FROM matches WHERE run_id = ? AND match_id IN "
            "(SELECT match_id FROM events WHERE kind = 'match_ended')"
        )
        ended = {r["match_id"]: r["players"] for r in query(stub, sql, settings.id).to_pylist()}
        assert ended == {p.match_id: list(p.players) for p in played}
    finally:
        server.close()


def test_a_remote_bot_gone_between_deals_is_waited_for_and_the_tournament_finishes(
    svc: Service,
) -> None:
    """bob leaves after the first deal and comes back a moment later: the next deal's
    seating waits for it (instead of failing), and every deal is played once."""
    bob_stop = threading.Event()
    bob = ArenaBotState("bob")
    threads: list[threading.Thread] = []

    def start_bob(delay: float) -> None:
        def run() -> None:
            time.sleep(delay)
            run_arena_bot(svc.address, "bob", bot_factory("random"), KEY, stop=bob_stop, state=bob)

        threads.append(threading.Thread(target=run, daemon=True))
        threads[-1].start()

    def bob_leaves_once(played: Sequence[Played]) -> None:
        if len(played) == 2:
            bob_stop.set()
            threads[0].join(HANG)
            bob_stop.clear()
            start_bob(0.5)

    settings = Settings(("alice", "bob"), 2, 3, 2, round_limit=1, remote=("alice", "bob"))
    start_bob(0)
    try:
        with arena_bots(svc.address, {"alice": "greedy"}):
            assert bob.registered.wait(HANG)
            played = play_remote(
                settings,
                ("alice", "bob"),
                ArenaServer(svc.address, KEY, wait_seconds=HANG),
                SeedsCommitment.new(settings),
                on_deal=bob_leaves_once,
                deals_at_once=1,
            )
    finally:
        bob_stop.set()
        for t in threads:
            t.join(HANG)
    assert [(p.deal, p.rotation) for p in played] == [(d, r) for d in range(3) for r in range(2)]
    assert bob.registrations == 2


def test_watch_in_process_prints_the_standings_after_every_deal(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "tournament", "--bots", "greedy,random", "--deals", "3", "--round-limit", "1",
            "--workers", "1", "--db", str(tmp_path / "t.duckdb"), "--watch", "--format", "json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("after ")] == [
        f"after {d} of 3 deals ({2 * d} matches):" for d in (1, 2, 3)
    ]


DYING_BOT = """
import os, sys
from analysis.arena_bot import run_arena_bot
from sniff import make_bot

class Dying:
    name = "greedy"
    decisions = 0

    def __init__(self, seed):
        self.inner = make_bot("greedy", seed)

    def choose(self, view):
        Dying.decisions += 1
        if Dying.decisions == int(sys.argv[3]):
            os._exit(9)  # killed mid-match: no goodbye to the service
        return self.inner.choose(view)

run_arena_bot(sys.argv[1], "alice", Dying, sys.argv[2])
"""


def in_process_rotation(seed: int, rotation: int, kinds: tuple[str, ...]) -> tuple[Any, ...]:
    """The scores and actions of one rotation of a deal played in process by these bots."""
    recorder = EventRecorder("m", len(kinds), seed=seed, target=10_000, round_limit=1)
    bots = [make_bot(k, rotation_bot_seed(seed, rotation, s)) for s, k in enumerate(kinds)]
    play_bots(recorder, bots)
    return recorder.match.seat_scores(), recorder.match.move_count


@pytest.mark.slow
def test_a_bot_killed_mid_tournament_loses_its_time_and_the_others_play_on(
    svc: Service,
) -> None:
    """alice's process dies in the middle of a match: with a time control her seats get
    the default moves once her time is out, the tournament finishes, and the matches she
    does not sit in are exactly those played in process."""
    control = TimeControl(300, 3_000, OutOfTime.DEFAULT_MOVE, "greedy")
    bots = ("alice", "bob", "greedy")
    settings = Settings(
        bots, 2, 3, 8, round_limit=1, target=10_000, remote=bots[:2], time_control=control
    )
    committed = SeedsCommitment.new(settings)
    alice = subprocess.Popen(
        [sys.executable, "-c", DYING_BOT, svc.address, KEY, "25"], cwd=Path(__file__).parents[1]
    )
    try:
        with arena_bots(svc.address, {"bob": "random"}):
            wait_until(lambda: "alice" in connected(svc), "alice registered")
            played = play_remote(
                settings,
                bots[:2],
                ArenaServer(svc.address, KEY, wait_seconds=HANG),
                committed,
                deals_at_once=1,
            )
        assert alice.wait(timeout=HANG) == 9  # she died during the tournament
    finally:
        if alice.poll() is None:
            alice.kill()
    assert [(p.deal, p.rotation) for p in played] == [(d, r) for d in range(3) for r in range(3)]
    for p in played:
        if "alice" not in p.players:  # bob (random) against greedy, here: as in process
            got = (p.scores, p.actions)
            assert got == in_process_rotation(
                committed.seeds[p.deal], p.rotation, ("random", "greedy")
            )
    sql = (
        "SELECT count(*) AS n FROM events e JOIN matches m USING (match_id) WHERE m.run_id = ? "
        "AND e.kind = 'action' AND json_extract_string(e.detail, '$.timeout') = 'greedy'"
    )
    assert query(svc.stub, sql, settings.id).column("n")[0].as_py() > 0  # alice's time ran out


def connected(svc: Service) -> set[str]:
    reply = svc.stub.ListArenaBots(pb.ListArenaBotsRequest(), metadata=ARENA, timeout=10)
    return {b.name for b in reply.bots}


def test_time_controls_without_remote_bots_are_refused_in_one_line() -> None:
    result = CliRunner().invoke(
        cli, ["tournament", "--bots", "greedy,random", "--deals", "1", "--move-ms", "100"]
    )
    assert result.exit_code == 2
    assert "give --remote bots" in result.stderr
