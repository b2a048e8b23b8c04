"""`sniff simulate`: runs of bot matches, played in chunks and stored in the event log.

A run is N matches with fixed settings (seats, bots, variant, round limit,
target, seed S). Match i is seeded S + i and its id is `<run>-<i>` (eight
digits), so what a run holds depends on its settings only, never on how
many workers played it or in what order its chunks finished.

The matches are cut into chunks (`chunk_size` consecutive matches). A
worker plays a chunk and writes its events, chained as the service chains
them, to `<db>.runs/<run>/chunk-00012.parquet`: first under a temporary
name, then renamed (atomic on one file system), so a chunk file is whole
or absent, and a chunk played twice overwrites rather than duplicates.
Its matches' facts (followed round by round as they are played, so never
replayed) are written beside it first, `facts-00012.<table>.parquet`.
The one process that owns the log then loads each chunk file in one
transaction (`EventLog.import_matches`, idempotent by match id), or sends
it to the live service that holds the file (ImportMatches).

The run's settings are written first, to `run.json` in the run directory,
so `--resume RUN` needs only the run id: it loads the chunk files the log
lacks and plays the chunks that have no file. Resuming therefore ends with
exactly the matches an uninterrupted run would have stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from analysis.bot_matches import recorded_bot_match, seat_bots
from service.match_recorder import EventRecorder
from service.storage.events import COLUMNS, columns_to_arrow
from service.storage.facts import new_rows
from sniff.facts import FactsRows, facts_rows
from sniff.seeds import match_seed

RUN_FILE = "run.json"
CHUNK_MATCHES_MAX = 500
"""Matches per chunk at most: a chunk is what an interruption may lose (and replay)."""


def runs_dir(db_path: str | os.PathLike[str]) -> Path:
    """Where a log's runs keep their chunk files: beside the log, `<db>.runs/`."""
    return Path(str(db_path) + ".runs")


def code_version() -> str:
    """The package version and rules version that played the matches."""
    from importlib.metadata import PackageNotFoundError, version

    from sniff.rules import RULES_VERSION

    try:
        package = version("american-sniff")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        package = "unknown"
    out = f"american-sniff {package}, rules {RULES_VERSION}"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{out}, git {commit}" if commit else out


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything that decides a run's matches (and how they are cut into chunks)."""

    run: str
    matches: int
    seats: int
    bots: tuple[str, ...]
    seed: int
    variant: str = "american"
    round_limit: int | None = None
    target: int | None = None
    chunk_size: int = 100
    code_version: str = ""

    @property
    def chunks(self) -> int:
        return -(-self.matches // self.chunk_size)

    def chunk_range(self, chunk: int) -> range:
        start = chunk * self.chunk_size
        return range(start, min(self.matches, start + self.chunk_size))

    def match_id(self, i: int) -> str:
        return f"{self.run}-{i:08d}"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["bots"] = list(self.bots)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RunSettings:
        obj = dict(obj)
        obj["bots"] = tuple(obj["bots"])
        return cls(**obj)


def default_run_id(
    matches: int,
    seats: int,
    bots: tuple[str, ...],
    seed: int,
    variant: str,
    round_limit: int | None,
    target: int | None,
) -> str:
    """A run id made from the settings: the same command names the same run."""
    key = json.dumps([matches, seats, list(bots), seed, variant, round_limit, target])
    return "sim-" + hashlib.sha256(key.encode()).hexdigest()[:10]


def default_chunk_size(matches: int, workers: int) -> int:
    """A few chunks per worker for a small run, at most CHUNK_MATCHES_MAX a chunk."""
    return max(1, min(CHUNK_MATCHES_MAX, -(-matches // (workers * 4))))


def chunk_path(run_dir: Path, chunk: int) -> Path:
    return run_dir / f"chunk-{chunk:05d}.parquet"


def facts_paths(run_dir: Path, chunk: int) -> tuple[Path, Path, Path]:
    """The chunk's facts rows, one file per facts table (written before the chunk file)."""
    matches, rounds, decisions = (
        run_dir / f"facts-{chunk:05d}.{table}.parquet" for table in FACTS_FILES
    )
    return matches, rounds, decisions


FACTS_FILES = ("matches", "rounds", "decisions")


def write_settings(run_dir: Path, settings: RunSettings) -> None:
    """`run.json`, atomically (a temp file renamed)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    _write_atomically(
        run_dir / RUN_FILE,
        lambda tmp: tmp.write_text(json.dumps(settings.to_json(), indent=1) + "\n"),
    )


def read_settings(run_dir: Path) -> RunSettings:
    return RunSettings.from_json(json.loads((run_dir / RUN_FILE).read_text()))


def _write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def clean_temporaries(run_dir: Path) -> None:
    """Remove what an interrupted write left (never a finished chunk)."""
    for leftover in run_dir.glob(".*.tmp-*"):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def chunk_table(settings: RunSettings, chunk: int) -> tuple[pa.Table, FactsRows]:
    """The events of a chunk's matches, chained, in order; and their facts rows.

    Each match's events are kept as columns (`EventRecorder`, the import's bulk path:
    a `LogEvent` an event cost twice the play), and a `RoundRecorder` follows each round
    as it is played, so the facts need no replay, here or in the one process that loads
    the chunks (which would otherwise replay every match to make them, and cap the run's
    speed).
    """
    players = seat_bots(settings.seats, settings.bots)
    columns: list[list[Any]] = [[] for _ in COLUMNS]
    facts = new_rows()
    for i in settings.chunk_range(chunk):
        recorder = _played(settings, i, players)
        for column, values in zip(columns, recorder.columns(), strict=True):
            column += values
        facts_rows(
            recorder.match,
            recorder.match_id,
            players,
            "simulated",
            settings.run,
            out=facts,
            rounds=recorder.rounds(),
        )
    return columns_to_arrow(columns), facts


def _played(settings: RunSettings, i: int, players: list[str]) -> EventRecorder:
    """Match i of the run, played by its bots and recorded."""
    return recorded_bot_match(
        settings.match_id(i),
        settings.seats,
        match_seed(settings.seed, i),
        settings.bots,
        target=settings.target,
        variant=settings.variant,
        round_limit=settings.round_limit,
        source="simulated",
        run_id=settings.run,
        players=players,
        code_version=settings.code_version,
    )


@dataclass(frozen=True, slots=True)
class ChunkDone:
    chunk: int
    matches: int
    events: int
    cpu_s: float
    """CPU seconds the worker spent on the chunk (play, events, file)."""


def play_chunk(job: tuple[str, dict[str, Any], int]) -> ChunkDone:
    """Play one chunk and write its file (in a worker process or a Ray task)."""
    run_dir, settings_json, chunk = job
    cpu = time.process_time()
    settings = RunSettings.from_json(settings_json)
    table, facts = chunk_table(settings, chunk)
    tables = (facts.matches, facts.rounds, facts.decisions)
    for path, columns in zip(facts_paths(Path(run_dir), chunk), tables, strict=True):
        _write_parquet(path, pa.table(columns))
    _write_parquet(chunk_path(Path(run_dir), chunk), table)  # last: the chunk is whole
    cpu = time.process_time() - cpu
    return ChunkDone(chunk, len(settings.chunk_range(chunk)), table.num_rows, cpu)


def _write_parquet(path: Path, table: pa.Table) -> None:
    _write_atomically(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def read_chunk(run_dir: Path, chunk: int) -> tuple[pa.Table, FactsRows | None]:
    """A chunk's events, and its facts rows (None for a chunk written without them: the
    log then makes them by replaying its matches)."""
    table = pq.read_table(chunk_path(run_dir, chunk))
    paths = facts_paths(run_dir, chunk)
    if not all(p.exists() for p in paths):
        return table, None
    matches, rounds, decisions = (pq.read_table(p).to_pydict() for p in paths)
    return table, FactsRows(matches, rounds, decisions)


def chunks_on_disk(run_dir: Path) -> set[int]:
    return {int(p.stem.split("-")[1]) for p in run_dir.glob("chunk-*.parquet")}


def chunks_in_log(settings: RunSettings, stored_ids: Iterable[str]) -> set[int]:
    """The chunks whose matches the log holds (a chunk is loaded in one transaction)."""
    prefix = settings.run + "-"
    return {
        int(m[len(prefix) :]) // settings.chunk_size for m in stored_ids if m.startswith(prefix)
    }


def ray_map(
    address: str, jobs: list[tuple[str, dict[str, Any], int]], workers: int
) -> Generator[ChunkDone, None, None]:
    """`play_chunk` for every job as Ray tasks, yielded as they finish."""
    import ray

    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        elif address == "auto":
            ray.init(include_dashboard=False, log_to_driver=False)  # RAY_ADDRESS, or a new one
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
    task = ray.remote(play_chunk)
    pending = [task.remote(job) for job in jobs]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
