"""`sniff simulate`: bot matches in worker processes (or Ray tasks), stored in the event log."""

from __future__ import annotations

import contextlib
import errno
import re
import signal
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import pyarrow as pa

from analysis.cli.errors import Misuse
from analysis.cli.import_cmd import db_error_line
from analysis.cli.interrupts import Interrupts, ignore_ctrl_c, ignored
from analysis.cli.options import (
    bots_option,
    check_seed_run,
    db_option,
    matches_option,
    progress_option,
    round_limit_option,
    seats_option,
    seed_option,
    target_option,
    tls_ca_option,
    variant_option,
    workers_option,
)
from analysis.cli.progress import Progress
from analysis.parallel import default_workers, ordered_map
from analysis.simcheck import choose_backend
from analysis.simulate import (
    RUN_FILE,
    ChunkDone,
    Job,
    RunSettings,
    chunks_in_log,
    chunks_on_disk,
    clean_temporaries,
    code_version,
    default_chunk_size,
    default_run_id,
    play_chunk,
    ray_map,
    read_chunk,
    read_facts_chunk,
    read_settings,
    remove_facts_chunk,
    runs_dir,
    simulation_run,
    write_settings,
)

if TYPE_CHECKING:
    from analysis.simfacts import SimTables
    from sniff.facts import FactsRows

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SIMULATE_MATCHES_MAX = 100_000_000


class _Sink:
    """Where finished chunks go: the log file itself, or the live service that holds it."""

    def __init__(self, db_path: str, tls_ca: str | None, threads: int = 1) -> None:
        from service.storage import EventLog, LogLocked, StorageError, find_owner

        self.db_path, self.tls_ca = db_path, tls_ca
        self.owner: Any = None
        self.log: Any = None
        for _ in range(2):
            self.owner = find_owner(db_path)
            if self.owner is not None:
                return
            try:
                self.log = EventLog(db_path, sync=False, threads=threads)
                return
            except LogLocked:
                continue
            except (StorageError, OSError) as e:
                raise Misuse(db_error_line(db_path, e)) from None
        raise Misuse(f"{db_path} is held by a process that does not advertise a service")

    def stored_ids(self, run: str) -> list[str]:
        sql = "SELECT match_id FROM matches WHERE run_id = $1"
        if self.log is not None:
            table = self.log.query(sql, [run])
        else:
            from analysis.logquery import query_service

            table = query_service(
                self.owner.address,
                sql,
                [run],
                token=self.owner.query_token or "",
                tls_ca=self.tls_ca,
            )
        return [str(m) for m in table.column(0).to_pylist()]

    def _refusal(self, e: Exception) -> Exception:
        """What to raise when the log or the service refused a chunk: one line for the
        log's error or the service's refusal, anything else as it is."""
        from service.storage import StorageError

        if isinstance(e, StorageError):
            return Misuse(db_error_line(self.db_path, e))
        details = getattr(e, "details", None)  # a gRPC refusal
        if callable(details):
            return Misuse(f"the service refused the matches: {details()}")
        return e

    def load(self, table: pa.Table, facts: FactsRows | None) -> None:
        try:
            if self.log is not None:
                self.log.import_matches(table, verify=False, facts=facts)  # made and chained here
                return
            from analysis.logquery import import_through_service

            import_through_service(
                self.owner, table.drop_columns(["logged_at"]), facts=facts, tls_ca=self.tls_ca
            )
        except Exception as e:
            raise self._refusal(e) from None

    def store(self, settings: RunSettings, tables: SimTables) -> None:
        """A facts-only chunk in one transaction: into the file, or through the live
        service that holds it (StoreSimulated)."""
        from sniff.rules import RULES_VERSION

        run = simulation_run(settings)
        try:
            if self.log is not None:
                self.log.store_simulated(
                    run, RULES_VERSION, tables.matches, tables.rounds, tables.decisions
                )
                return
            from analysis.logquery import store_through_service

            store_through_service(
                self.owner,
                run,
                tables.matches,
                tables.rounds,
                tables.decisions,
                tls_ca=self.tls_ca,
            )
        except Exception as e:
            raise self._refusal(e) from None

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


@click.command()
@seats_option
@matches_option(1000, SIMULATE_MATCHES_MAX, "How many matches.")
@seed_option(0, "Seed of the run: match i is seeded seed + i.")
@bots_option("greedy,random", allowed=("random", "greedy"))
@variant_option
@round_limit_option
@target_option
@workers_option
@db_option
@click.option(
    "--run",
    "run_id",
    default=None,
    help="The run's id (letters, digits, _ . -). Default: one made from the settings "
    "(sim-...), so the same command names the same run.",
)
@click.option(
    "--resume",
    "resume",
    default=None,
    metavar="RUN",
    help="Complete an interrupted run: its settings are stored, so only its id is needed.",
)
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS",
    help="Play the chunks as Ray tasks on this cluster ('local' starts one here, 'auto' "
    "finds one); needs pip install '.[cluster]' and the run directory on a shared disk.",
)
@click.option(
    "--events",
    "events",
    is_flag=True,
    help="Store every event of every match, chained, as served matches are (slower); by "
    "default a run stores its matches' settings, results and facts, and their events are "
    "regenerated from the seed on demand.",
)
@progress_option
@tls_ca_option
def simulate(
    seats: int,
    count: int,
    seed: int,
    bots: tuple[str, ...],
    variant: str,
    round_limit: int | None,
    target: int | None,
    workers: int | None,
    db_path: str,
    run_id: str | None,
    resume: str | None,
    ray_address: str | None,
    progress: bool,
    tls_ca: str | None,
    events: bool,
) -> None:
    """Play MATCHES bot matches on every core and store them in the event log, marked
    simulated with the run's id, its settings and the code version, beside served play.

    Match i is seeded seed + i and named <run>-<i>, so a run's matches do not
    depend on the number of workers. Workers write chunks of matches as Parquet
    files under <db>.runs/<run>/ (each whole or absent), and each chunk is loaded
    into the log in one transaction (through the service while `sniff serve`
    holds the file). Ctrl-C or SIGTERM keeps every finished chunk; --resume RUN
    completes the run to exactly the matches an uninterrupted run stores.

    Exit status: 0 the run is complete, 2 misuse, an interruption or a full disk
    (resume the run).

    Example: sniff simulate --matches 100000 --seats 2 --bots greedy,random --seed 7
    """
    workers = workers or default_workers()
    root = runs_dir(db_path)
    ctx = click.get_current_context()
    if resume is not None:
        given = [
            "--" + name.replace("_", "-")
            for name in (
                "seats",
                "count",
                "seed",
                "bots",
                "variant",
                "round_limit",
                "target",
                "events",
            )
            if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        ] + (["--run"] if run_id is not None else [])
        if given:
            shown = ", ".join("--matches" if g == "--count" else g for g in given)
            raise Misuse(f"--resume runs with the run's stored settings: leave out {shown}")
        run_dir = root / resume
        if not RUN_ID.fullmatch(resume) or not (run_dir / RUN_FILE).is_file():
            raise Misuse(f"no run {resume!r} to resume beside {db_path} (in {root})")
        try:
            settings = read_settings(run_dir)
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise Misuse(f"cannot read the settings of run {resume}: {e}") from None
        sink = _Sink(db_path, tls_ca, workers)
    else:
        check_seed_run(seed, count)
        run = run_id or default_run_id(count, seats, bots, seed, variant, round_limit, target)
        if not RUN_ID.fullmatch(run):
            raise click.BadParameter(
                "a run id is 1 to 64 letters, digits, '_', '.' or '-' (not first)",
                param_hint="--run",
            )
        run_dir = root / run
        if (run_dir / RUN_FILE).exists():
            raise Misuse(
                f"run {run} already exists beside {db_path}; complete it with --resume {run}"
            )
        sink = _Sink(db_path, tls_ca, workers)
        settings = RunSettings(
            run,
            count,
            seats,
            bots,
            seed,
            variant,
            round_limit,
            target,
            default_chunk_size(count, workers, events),
            code_version(),
            events,
        )
    try:
        if ray_address is not None:
            try:
                import ray  # noqa: F401
            except ImportError:
                raise Misuse("--ray needs Ray: pip install 'american-sniff[cluster]'") from None
        backend = "python" if settings.events else choose_backend()
        _run(sink, settings, run_dir, workers, ray_address, progress, resume is None, backend)
    finally:
        sink.close()


def _run(
    sink: _Sink,
    settings: RunSettings,
    run_dir: Path,
    workers: int,
    ray_address: str | None,
    progress: bool,
    fresh: bool,
    backend: str,
) -> None:
    run = settings.run
    try:
        if fresh:
            write_settings(run_dir, settings)
        clean_temporaries(run_dir)
    except OSError as e:
        raise Misuse(f"cannot write run {run} in {run_dir}: {e.strerror or e}") from None
    loaded = chunks_in_log(settings, sink.stored_ids(run))
    on_disk = chunks_on_disk(run_dir)
    bar = Progress(progress, "simulating", unit="matches")
    bar.start(settings.matches, sum(len(settings.chunk_range(c)) for c in loaded))
    started = time.monotonic()
    interrupts = Interrupts(signal.SIGINT, signal.SIGTERM)  # SIGTERM stops it as Ctrl-C does

    def load(chunk: int) -> None:
        if chunk not in loaded:
            with interrupts.held():
                if settings.events:
                    sink.load(*read_chunk(run_dir, chunk))
                else:
                    sink.store(settings, read_facts_chunk(run_dir, chunk))
                loaded.add(chunk)
            if not settings.events:
                remove_facts_chunk(run_dir, chunk)
            bar.update(len(settings.chunk_range(chunk)))

    todo = [c for c in range(settings.chunks) if c not in loaded and c not in on_disk]
    jobs: list[Job] = [(str(run_dir), settings.to_json(), c, backend) for c in todo]
    played, cpu = 0, 0.0
    try:
        with interrupts:
            for chunk in sorted(on_disk - loaded):
                load(chunk)
            done: Generator[ChunkDone, None, None]
            if ray_address is not None:
                done = ray_map(ray_address, jobs, workers)
            else:
                done = ordered_map(
                    play_chunk,
                    jobs,
                    min(workers, max(1, len(jobs))),
                    ("analysis.simulate",),
                    ignore_ctrl_c,
                    # a facts-only run's writer works here while the worker plays (with
                    # --events the writer's share is small: one worker plays here)
                    inline=settings.events,
                )
            with contextlib.closing(done):  # on an interruption: the running chunks finish
                for finished in done:
                    played += finished.matches
                    cpu += finished.cpu_s
                    load(finished.chunk)
    except KeyboardInterrupt:
        with ignored():
            for chunk in sorted(chunks_on_disk(run_dir) - loaded):
                load(chunk)  # chunks that finished while the run stopped
        bar.finish()
        raise Misuse(_stopped(settings, loaded, run_dir, "interrupted")) from None
    except Misuse as e:  # the log refused a chunk (a full disk under the log, say)
        bar.finish()
        raise Misuse(_stopped(settings, loaded, run_dir, e.message)) from None
    except OSError as e:
        with ignored(), contextlib.suppress(Misuse, OSError):
            clean_temporaries(run_dir)
            for chunk in sorted(chunks_on_disk(run_dir) - loaded):
                load(chunk)
        bar.finish()
        why = "the disk is full" if e.errno == errno.ENOSPC else (e.strerror or str(e))
        raise Misuse(
            _stopped(settings, loaded, run_dir, f"cannot write a chunk in {run_dir}: {why}")
        ) from None
    bar.finish()
    elapsed = time.monotonic() - started
    rate = ""
    if played and elapsed > 0:
        rate = f", {played / elapsed:,.0f} matches/s, {cpu:,.1f} worker CPU s"
    click.echo(
        f"{sink.db_path}: run {run} complete: {settings.matches:,} simulated matches "
        f"({played:,} played now{rate})"
    )


def _stopped(settings: RunSettings, loaded: set[int], run_dir: Path, why: str) -> str:
    stored = sum(len(settings.chunk_range(c)) for c in loaded)
    return (
        f"{why}: {stored:,} of {settings.matches:,} matches of run {settings.run} stored, none "
        f"half-written; sniff simulate --resume {settings.run} completes the run"
    )
