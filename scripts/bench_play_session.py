"""What a Play action costs the server's own code, without gRPC: CPU per action in one process.

Why this beside `bench_play.py`: on the shared 2-core machine a served action's CPU
varies between runs by more than a change to the Play path saves, and most of it is
grpcio's (docs/benchmarks.md, "Where a Play action's CPU goes"). Here the very Play
sessions the servicer runs (`service.rpc.play_stream.PlayStreams`, the hub's pool, the
event log with fsync on, a fresh file each run) play 2-seat matches on one asyncio loop
against a client that answers each decision with its first legal move. Every response is
serialized and every request parsed from bytes, as gRPC would; what is left out is
gRPC's own work per message (reading, writing, its threads). The client's work is in the
figure too (picking `moves[0]`, building the answer: a few µs).

Two ways, each run in a process of its own, alternating: **shared**, every seat of
every match on one stream (as bench_play.py plays), and **per seat**, a stream per
seat (as bench_play_many.py plays). Prints the median CPU per action (moves and deals)
over `--runs`.

    .venv/bin/python scripts/bench_play_session.py --runs 5 --matches 16
    .venv/bin/python scripts/bench_play_session.py --quick --json      # smoke run

Exits 1 (SystemExit) when a stream ends before its matches do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WAYS = ("shared", "per seat")


async def _play(matches: int, shared: bool, db: Path) -> tuple[int, float]:
    """(actions, CPU seconds) of `matches` matches played to their end over Play sessions."""
    from service.hub import Hub
    from service.rpc.gen.sniff.v1 import sniff_pb2 as pb
    from service.rpc.play_stream import PlayStreams
    from service.storage.log import EventLog
    from sniff import Phase

    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=8)

    async def blocking(fn: Any, *args: Any) -> Any:
        return await loop.run_in_executor(pool, lambda: fn(*args))

    log = EventLog(db)
    hub = Hub(log)
    streams = PlayStreams(hub, blocking)
    seats = []
    for i in range(matches):
        made = hub.create(2, seed=i)
        seats += [(made.match_id, s, t) for s, t in enumerate(made.seat_tokens)]
    groups = [seats] if shared else [[s] for s in seats]
    actions = 0

    async def stream(group: list[tuple[str, int, str]]) -> None:
        nonlocal actions
        answers: asyncio.Queue[bytes | None] = asyncio.Queue()
        opening = pb.PlayRequest(
            open=pb.PlayOpen(seats=[pb.PlaySeat(match_id=m, token=t) for m, _, t in group])
        )
        await answers.put(opening.SerializeToString())
        ended = {m: False for m, _, _ in group}

        async def requests() -> AsyncIterator[pb.PlayRequest]:
            while (data := await answers.get()) is not None:
                yield pb.PlayRequest.FromString(data)

        async def write(response: pb.PlayResponse) -> None:
            nonlocal actions
            got = pb.PlayResponse.FromString(response.SerializeToString())
            batch = []
            for u in got.updates:
                kind = u.WhichOneof("kind")
                if kind == "event" and u.event.WhichOneof("kind") == "match_ended":
                    ended[u.match_id] = True
                if kind != "decision":
                    continue
                d = u.decision
                answer = pb.PlayAnswer(match_id=u.match_id, seat=u.seat, move_count=d.move_count)
                if d.WhichOneof("kind") == "deal":
                    answer.deal.round_index = d.deal.round_index
                else:
                    answer.notation = d.move.moves[0].notation
                batch.append(answer)
            actions += len(batch)
            if batch:
                request = pb.PlayRequest(answers=pb.PlayAnswers(answers=batch))
                await answers.put(request.SerializeToString())
            if all(ended.values()):
                await answers.put(None)

        await streams.play(requests(), write)

    began = time.process_time()
    await asyncio.gather(*(stream(g) for g in groups))
    spent = time.process_time() - began
    unfinished = [m for m, _, _ in seats if hub.get(m).match.phase is not Phase.OVER]
    if unfinished:
        raise SystemExit(f"the streams ended before matches {sorted(set(unfinished))} did")
    log.close()
    pool.shutdown()
    return actions, spent


def one(way: str, matches: int) -> float:
    """CPU µs per action of one way, in this process."""
    with tempfile.TemporaryDirectory() as tmp:
        actions, spent = asyncio.run(_play(matches, way == "shared", Path(tmp) / "b.duckdb"))
    return spent / actions * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--matches", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="1 run of 2 matches")
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    parser.add_argument("--one", choices=WAYS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.runs, args.matches = 1, 2
    if args.one:
        print(one(args.one, args.matches))
        return
    figures: dict[str, list[float]] = {way: [] for way in WAYS}
    for run in range(args.runs):
        for way in WAYS if run % 2 == 0 else WAYS[::-1]:
            cmd = [sys.executable, __file__, "--one", way, "--matches", str(args.matches)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            figures[way].append(float(out.split()[-1]))
            print(f"  run {run} {way:>8}: {figures[way][-1]:,.0f} us of CPU per action", flush=True)
    print(f"medians of {args.runs} runs, {args.matches} 2-seat matches, first legal move:")
    for way, values in figures.items():
        spread = f"{min(values):,.0f}-{max(values):,.0f}"
        print(f"  {way:>8}: {statistics.median(values):,.0f} us per action ({spread})")
    if args.json:
        medians = {way: statistics.median(values) for way, values in figures.items()}
        print(json.dumps({"runs": args.runs, "matches": args.matches, "us_per_action": medians}))


if __name__ == "__main__":
    main()
