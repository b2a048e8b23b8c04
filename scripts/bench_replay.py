"""How fast `sniff matches` and `sniff replay` answer from a large event log.

Builds (once, cached under the temp dir, keyed by the schema and this
script's version) a log of --matches bot-played matches: a pool of distinct
matches played in-process with the engine, logged through the storage
API's own Arrow schema, then copied in bulk by DuckDB under fresh match ids
and times. Then, from the file with no service running, it times:

- in-process: the command's work (the query through analysis.logquery, the
  replay or the listing, the rendering), median of --runs;
- as a subprocess: the whole `sniff ...` command, start-up included: the
  figure the 0.3 s target is for (`sniff matches`, `sniff replay`). A
  `sniff query` aggregate over the matches view is timed beside them.

Each is measured on the log as the storage package makes it (schema 3, with
its index on events_all (match_id) and the typed settings and results
tables), and on a copy without that index, to show what the index buys.
Then what the index costs: the file's size, a process's memory after it
opened the log and found one match, and the time to load a backlog of 8,192
events (the service's batch) into the large log, with and without it.

    .venv/bin/python scripts/bench_replay.py             # 100,000 matches
    .venv/bin/python scripts/bench_replay.py --quick     # 1,000 matches, a smoke test
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from datetime import UTC, datetime
from typing import Any

import duckdb

from analysis.bot_matches import bot_match_events
from analysis.logquery import query_log_values
from analysis.replay.source import MatchFilter, list_matches, load_replay
from analysis.replay.text import replay_text
from service.storage import SCHEMA_VERSION, EventLog
from service.storage.events import to_arrow, to_rows
from service.storage.log import insert_rows

BENCH_VERSION = 3
"""Bump when the way the log is built changes, so a stale cache is not reused."""
TARGET_S = 0.3
"""For each `sniff matches` and `sniff replay` case, the whole command as a subprocess."""
QUERY_SQL = "SELECT seats, count(*) AS matches, avg(rounds) AS rounds FROM matches GROUP BY seats"
DROP_INDEX_SQL = "DROP INDEX events_all_match_id"
# The copies keep the pool's hashes: their chains do not verify (the content
# names another match id), which no command timed here looks at.
BULK_SQL = """
INSERT INTO events_all (match_id, seq, kind, round, action_index, seat, move, drawn,
                        points, ends_sum, detail, logged_at, hash)
SELECT
    substr(md5(p.match_id || ':' || CAST(r.k AS VARCHAR)), 1, 16),
    p.seq, p.kind, p.round, p.action_index, p.seat, p.move, p.drawn,
    p.points, p.ends_sum, CAST(p.detail AS JSON),
    TIMESTAMPTZ '2025-01-01 00:00:00+00'
        + to_minutes(CAST(r.k * ? + p.pool_index AS BIGINT))
        + to_seconds(CAST(p.seq AS BIGINT)),
    p.hash
FROM pool AS p, range(?) AS r(k)
"""

# The typed tables, as the log's own load makes them (events.settings_rows, result_rows).
SETTINGS_SQL = """
INSERT INTO match_settings_all (match_id, seats, target, seed, rules_version, created_at,
                                variant, round_limit, players, source, run_id, explicit_deals,
                                seed_commitment, detail)
SELECT match_id, CAST(detail ->> '$.seats' AS SMALLINT), CAST(detail ->> '$.target' AS INTEGER),
       CAST(detail ->> '$.seed' AS HUGEINT), detail ->> '$.rules_version', logged_at,
       coalesce(detail ->> '$.variant', 'american'),
       CAST(detail ->> '$.round_limit' AS INTEGER), NULL, 'served', NULL, false,
       detail ->> '$.seed_commitment', detail
FROM events_all WHERE kind = 'match_created'
"""
RESULTS_SQL = """
INSERT INTO match_results_all
SELECT e.match_id, e.logged_at, CAST(e.detail ->> '$.winner' AS INTEGER),
       CAST(e.detail -> '$.scores' AS INTEGER[]), CAST(e.detail ->> '$.rounds' AS INTEGER),
       CASE WHEN (e.detail ->> '$.round_limit_reached') = 'true' THEN 'round_limit'
            ELSE 'target' END
FROM events_all AS e WHERE kind = 'match_ended'
"""


def build_log(path: Path, matches: int, pool_size: int, with_index: bool = True) -> None:
    """Play the pool, then copy it into a fresh log `matches // pool_size` times."""
    started = time.perf_counter()
    pool_size = min(pool_size, matches)
    events = []
    bots = (("greedy", "random"), ("greedy",), ("random", "greedy"))
    for i in range(pool_size):
        seats = (2, 3, 4)[i % 3]
        events += bot_match_events(f"pool{i}", seats, 1_000 + i, bots[i % len(bots)])
    played = time.perf_counter()
    table = to_arrow(events)
    index = {f"pool{i}": i for i in range(pool_size)}
    import pyarrow as pa

    table = table.append_column(
        "pool_index", pa.array([index[m] for m in table.column("match_id").to_pylist()], pa.int64())
    )
    tmp = path.with_suffix(".building")
    for leftover in (tmp, Path(f"{tmp}.wal")):
        leftover.unlink(missing_ok=True)
    EventLog(tmp).close()  # the storage package's own schema
    con = duckdb.connect(str(tmp))
    if not with_index:
        con.execute(DROP_INDEX_SQL)
    con.register("pool", table)
    con.execute(BULK_SQL, [pool_size, matches // pool_size])
    con.execute(SETTINGS_SQL)
    con.execute(RESULTS_SQL)
    con.execute("CHECKPOINT")
    rows = con.execute("SELECT count(*) FROM events_all").fetchall()[0][0]
    con.close()
    os.replace(tmp, path)
    print(
        f"built {path.name}: {matches:,} matches, {rows:,} events; played the pool of"
        f" {pool_size:,} in {played - started:.1f} s, bulk copy in"
        f" {time.perf_counter() - played:.1f} s, {path.stat().st_size / 1e6:,.0f} MB"
    )


def cached_logs(matches: int, pool_size: int) -> tuple[Path, Path]:
    """The log (with its index) and a copy without the index, built on first use."""
    key = hashlib.sha256(f"{SCHEMA_VERSION}:{BENCH_VERSION}:{matches}:{pool_size}".encode())
    directory = Path(tempfile.gettempdir()) / "sniff-bench-replay"
    directory.mkdir(exist_ok=True)
    stem = f"log-{matches}-{key.hexdigest()[:12]}"
    indexed, plain = directory / f"{stem}.duckdb", directory / f"{stem}-no-index.duckdb"
    if not indexed.exists():
        build_log(indexed, matches, pool_size)
    if not plain.exists():
        build_log(plain, matches, pool_size, with_index=False)  # the same log, built without it
    return indexed, plain


def index_cost(indexed: Path, plain: Path, runs: int) -> None:
    """What the index costs: file size, memory after one lookup, time to load a backlog."""
    print("\nwhat the index on events_all (match_id) costs:")
    print(
        f"{'log':<22}{'file MB':>9}{'RSS MB: lookup':>16}{'service open':>14}"
        f"{'load 8,192 events s':>22}"
    )
    batch = load_batch()
    for label, path in (("with the index", indexed), ("without it", plain)):
        size = path.stat().st_size / 1e6
        lookup, service = lookup_rss(path, write=False), lookup_rss(path, write=True)
        times = []
        for _ in range(runs):
            con = duckdb.connect(str(path))
            con.execute("BEGIN TRANSACTION")
            began = time.perf_counter()
            insert_rows(con, batch)
            times.append(time.perf_counter() - began)
            con.execute("ROLLBACK")  # measure the insert, keep the cached log as it is
            con.close()
        print(
            f"{label:<22}{size:>9,.0f}{lookup:>16,.0f}{service:>14,.0f}"
            f"{statistics.median(times):>22.3f}"
        )


def load_batch() -> list[Any]:
    """8,192 events of fresh matches, stamped: a backlog the service loads at once."""
    rows: list[Any] = []
    now = datetime.now(UTC)
    i = 0
    while len(rows) < 8192:
        events = bot_match_events(f"fresh{i:011d}", 2 + i % 3, 77_000 + i)
        rows += [(*row[:-1], now) for row in to_rows(events)]
        i += 1
    return rows[:8192]


def lookup_rss(path: Path, write: bool) -> float:
    """Peak resident memory (MB) of a process that opens the log and finds one match:
    read-only as the CLI does, or read-write as the service does (on a throwaway copy)."""
    opener = "EventLog" if write else "open_readonly"
    code = (
        "import sys\n"
        f"from service.storage import {opener}\n"
        f"log = {opener}(sys.argv[1])\n"
        "mid = log.query('SELECT match_id FROM match_settings_all LIMIT 1').to_pylist()[0]\n"
        "log.events_for(mid['match_id'])\n"
        # VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork and exec
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))\n"
        "log.close()\n"
    )
    tmp = path.with_suffix(".rss")
    shutil.copyfile(path, tmp)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(tmp)],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[1],
        )
    finally:
        for leftover in (tmp, Path(f"{tmp}.wal"), Path(f"{tmp}.tmp")):
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
    return int(done.stdout.strip().splitlines()[-1]) / 1024


def median_time(work: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds (this process, all its threads) of `work`."""
    times, cpu = [], []
    for _ in range(runs):
        began, cpu_began = time.perf_counter(), time.process_time()
        work()
        times.append(time.perf_counter() - began)
        cpu.append(time.process_time() - cpu_began)
    return statistics.median(times), statistics.median(cpu)


SNIFF_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The commands run as an installed `sniff` does, with its modules' bytecode cached
(PYTHONDONTWRITEBYTECODE would have each run compile the project's modules anew)."""


def whole_replay_text(db: str, match_id: str) -> str:
    """`sniff replay MATCH` in-process: the whole match as text."""
    replay = load_replay(db, match_id)
    return replay_text(replay, replay.steps)


def whole_replay_json(db: str, match_id: str) -> list[dict[str, Any]]:
    """`sniff replay MATCH --format jsonl` in-process: every step as JSON."""
    return [step.to_json() for step in load_replay(db, match_id).steps]


def sniff(*args: str) -> None:
    command = [str(Path(sys.executable).parent / "sniff"), *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=SNIFF_ENV)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--pool", type=int, default=1_000, help="distinct matches played")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 matches, one run")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.pool, args.runs = 1_000, 100, 1
    indexed, plain = cached_logs(args.matches, args.pool)
    rng = random.Random(7)
    con = duckdb.connect(str(plain), read_only=True)
    ids = [
        r[0] for r in con.execute("SELECT match_id FROM matches USING SAMPLE 20 ROWS").fetchall()
    ]
    con.close()
    print(f"log: {args.matches:,} matches; medians of {args.runs} runs; target < {TARGET_S} s\n")
    print(f"{'log':<22}{'what':<40}{'in-process s':>13}{'(cpu s)':>9}{'subprocess s':>14}")
    worst = worst_sub = 0.0
    for label, path in (("with match_id index", indexed), ("without the index", plain)):
        db = str(path)
        match_id = rng.choice(ids)
        cases: list[tuple[str, Callable[[], object], tuple[str, ...]]] = [
            (
                "sniff matches (newest 50)",
                partial(list_matches, db, MatchFilter(limit=50)),
                ("matches", "--db", db),
            ),
            (
                "sniff matches --seats 3 --finished",
                partial(list_matches, db, MatchFilter(seats=3, finished=True, limit=50)),
                ("matches", "--db", db, "--seats", "3", "--finished"),
            ),
            (
                "sniff replay MATCH (text, whole match)",
                partial(whole_replay_text, db, match_id),
                ("replay", match_id, "--db", db),
            ),
            (
                "sniff replay MATCH --format jsonl",
                partial(whole_replay_json, db, match_id),
                ("replay", match_id, "--db", db, "--format", "jsonl"),
            ),
            (
                "sniff query (matches by seats)",
                partial(query_log_values, db, QUERY_SQL),
                ("query", QUERY_SQL, "--db", db),
            ),
        ]
        for what, work, argv in cases:
            inproc, cpu = median_time(work, args.runs)
            sniff(*argv)  # once untimed: the bytecode cache and the file's pages, as in use
            sub, _ = median_time(partial(sniff, *argv), args.runs)
            if path == indexed and argv[0] != "query":
                worst = max(worst, inproc)
                worst_sub = max(worst_sub, sub)
            print(f"{label:<22}{what:<40}{inproc:>13.3f}{cpu:>9.3f}{sub:>14.3f}")
    print(
        f"\nwith the index, the slowest `sniff matches`/`sniff replay` as a subprocess:"
        f" {worst_sub:.3f} s ({'within' if worst_sub < TARGET_S else 'OVER'} the {TARGET_S} s"
        f" target); its own work: {worst:.3f} s"
    )
    print(
        "subprocess times include starting Python and importing click and DuckDB (a replay"
        " also the engine; see `python -X importtime -m analysis.cli`);"
        " cpu s counts every thread of this process, the figure to compare on a busy machine."
    )
    index_cost(indexed, plain, args.runs)


if __name__ == "__main__":
    main()
