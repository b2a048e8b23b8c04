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
import functools
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
from analysis.simfacts import SimTables, facts_tables, played_rows
from service.match_recorder import EventRecorder
from service.storage.chain import MatchSecrets
from service.storage.events import COLUMNS, columns_to_arrow
from service.storage.facts import new_rows
from service.storage.simulated import SimulationRun
from sniff.facts import FactsRows, facts_rows
from sniff.seeds import match_seed, simulated_secret
from sniff.simulated import SIM_VERSION, MatchSettings

RUN_FILE = "run.json"
CHUNK_MATCHES_MAX = 500
"""Matches per chunk at most when the events are stored: a chunk is what an interruption
may lose (and replay)."""
FACTS_CHUNK_MATCHES_MAX = 100_000
"""Matches per chunk at most when the facts only are stored (about three seconds of the
kernel's play): each chunk costs the log one transaction, which costs less a match the
larger it is, and is what an interruption may lose."""


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
    events: bool = False
    """Store every event, chained (`--events`), rather than the facts only."""

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
        obj.setdefault("events", True)  # a run of an older release stored its events
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


def default_chunk_size(matches: int, workers: int, events: bool = True) -> int:
    """A few chunks per worker for a small run, at most CHUNK_MATCHES_MAX a chunk
    (FACTS_CHUNK_MATCHES_MAX for a facts-only run, a quarter of it with one worker: the
    writer then has a core of its own and keeps up with smaller chunks, and the last
    chunk's write, which nothing overlaps, is shorter)."""
    if events:
        most = CHUNK_MATCHES_MAX
    else:
        most = FACTS_CHUNK_MATCHES_MAX if workers > 1 else FACTS_CHUNK_MATCHES_MAX // 4
    return max(1, min(most, -(-matches // (workers * 4))))


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
    return simulated_match(
        settings.match_id(i),
        match_seed(settings.seed, i),
        match_settings(settings),
        settings.run,
        settings.code_version,
    )


def simulated_match(
    match_id: str, seed: int, settings: MatchSettings, run: str, code_version: str
) -> EventRecorder:
    """A simulated match played by its bots and recorded, with its derived secrets
    (`seeds.simulated_secret`): what `--events` stores, and what regeneration makes."""
    secrets = MatchSecrets(
        seed, simulated_secret(match_id, seed, "salt"), simulated_secret(match_id, seed, "chain")
    )
    return recorded_bot_match(
        match_id,
        settings.seats,
        seed,
        settings.bots,
        target=settings.target,
        variant=settings.variant,
        round_limit=settings.round_limit,
        secrets=secrets,
        source="simulated",
        run_id=run,
        players=list(settings.seat_bots),
        code_version=code_version,
    )


@dataclass(frozen=True, slots=True)
class ChunkDone:
    chunk: int
    matches: int
    events: int
    cpu_s: float
    """CPU seconds the worker spent on the chunk (play, events, file)."""


Job = tuple[str, dict[str, Any], int, str]
"""A chunk to play: the run directory, the run's settings, the chunk, the backend ("c" or
"python": the same matches)."""


def play_chunk(job: Job) -> ChunkDone:
    """Play one chunk and write its files (in a worker process or a Ray task)."""
    run_dir, settings_json, chunk, backend = job
    cpu = time.process_time()
    settings = RunSettings.from_json(settings_json)
    if not settings.events:
        matches = play_facts_chunk(Path(run_dir), settings, chunk, backend)
        return ChunkDone(chunk, matches, 0, time.process_time() - cpu)
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
    events = {int(p.stem.split("-")[1]) for p in run_dir.glob("chunk-*.parquet")}
    facts = {int(p.name.split(".")[0].split("-")[1]) for p in run_dir.glob("sim-*.matches.arrow")}
    return events | facts


# -- facts-only chunks --------------------------------------------------------------

SIM_FILES = ("decisions", "rounds", "matches")
"""A facts-only chunk's files, in the order written: the matches' file last, so a chunk
whose matches' file exists is whole."""


def sim_paths(run_dir: Path, chunk: int) -> tuple[Path, Path, Path]:
    decisions, rounds, matches = (run_dir / f"sim-{chunk:05d}.{t}.arrow" for t in SIM_FILES)
    return decisions, rounds, matches


def match_settings(settings: RunSettings) -> MatchSettings:
    return MatchSettings(
        settings.seats, settings.bots, settings.variant, settings.target, settings.round_limit
    )


def play_facts_chunk(run_dir: Path, settings: RunSettings, chunk: int, backend: str) -> int:
    """Play a chunk's matches (kernel or engine: the same) and write their facts as Arrow
    files (`analysis.simfacts`); how many matches."""
    matches = settings.chunk_range(chunk)
    seeds = [match_seed(settings.seed, i) for i in matches]
    raw = played_rows(match_settings(settings), seeds, backend)
    tables = facts_tables(raw, settings.run, matches.start, seeds, settings.seats)
    for path, table in zip(
        sim_paths(run_dir, chunk), (tables.decisions, tables.rounds, tables.matches), strict=True
    ):
        _write_atomically(path, functools.partial(_write_arrow, table=table))
    return len(matches)


def _write_arrow(path: Path, *, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def read_facts_chunk(run_dir: Path, chunk: int) -> SimTables:
    decisions, rounds, matches = (
        pa.ipc.open_file(pa.memory_map(str(p))).read_all() for p in sim_paths(run_dir, chunk)
    )
    return SimTables(matches, rounds, decisions)


def remove_facts_chunk(run_dir: Path, chunk: int) -> None:
    """A loaded chunk's files (the log holds its matches: a resume never needs them)."""
    for path in sim_paths(run_dir, chunk):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def simulation_run(settings: RunSettings) -> SimulationRun:
    """The run's `simulation_runs` row."""
    ms = match_settings(settings)
    return SimulationRun(
        settings.run,
        settings.matches,
        settings.seats,
        settings.bots,
        ms.seat_bots,
        settings.seed,
        settings.variant,
        ms.points_target,
        settings.round_limit,
        "events" if settings.events else "facts",
        SIM_VERSION,
        settings.code_version,
    )


def chunks_in_log(settings: RunSettings, stored_ids: Iterable[str]) -> set[int]:
    """The chunks whose matches the log holds (a chunk is loaded in one transaction)."""
    prefix = settings.run + "-"
    return {
        int(m[len(prefix) :]) // settings.chunk_size for m in stored_ids if m.startswith(prefix)
    }


def ray_map(address: str, jobs: list[Job], workers: int) -> Generator[ChunkDone, None, None]:
    """`play_chunk` for every job as Ray tasks, yielded as they finish."""
    from analysis.parallel import ray_unordered

    for _, done in ray_unordered(play_chunk, jobs, address, workers):
        yield done
