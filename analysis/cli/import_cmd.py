"""`sniff import`: audit docs/records.md records and load the good ones into the event log."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack, closing
from pathlib import Path
from typing import TYPE_CHECKING

import click
import pyarrow as pa

from analysis.cli.audit_cmd import read_lines
from analysis.cli.errors import Misuse, first_line
from analysis.cli.formats import format_option, json_line
from analysis.cli.interrupts import Interrupts
from analysis.cli.options import db_option, progress_option, tls_ca_option, workers_option
from analysis.cli.progress import Progress
from analysis.parallel import default_workers
from service.storage.facts import Facts, merged_facts

if TYPE_CHECKING:
    from service.storage.log import ImportLoad


@click.command("import")
@click.argument("file", type=click.Path(allow_dash=True))
@db_option
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Load the records that audit ok and list the others (default: a bad record and "
    "nothing is loaded).",
)
@format_option("text", "jsonl", jsonl="one object a record: the audit's, with match_id and status")
@workers_option
@progress_option
@tls_ca_option
def import_(
    file: str,
    db_path: str,
    skip_bad: bool,
    fmt: str,
    workers: int | None,
    progress: bool,
    tls_ca: str | None,
) -> None:
    """Audit match records (JSON Lines, docs/records.md: either format, any variant) and load them
    into the event log as imported matches, all or nothing.

    Each record is audited as `sniff audit` does; if any is bad, nothing is
    loaded (with --skip-bad, the good ones are). The records go in as whole
    matches with their hash chain, marked imported, their players and their
    own ids kept; they have no seed commitment (their deals were given).
    A record's match id comes from its content (imp-...), so importing it
    again changes nothing. The load is one transaction: stopped at any point
    (Ctrl-C included), it leaves the log as it was. While a service holds
    the log, the matches go in through it (ImportMatches, with its query
    token).

    Exit status: 0 every record loaded (or already there), 1 some record bad
    (listed), 2 misuse or an interrupted import.

    Example: sniff import club-night.jsonl --db sniff.duckdb
    """
    from analysis.importer import mark, prepare

    if file != "-" and not Path(file).is_file():
        raise Misuse(
            f"cannot read {file}: " + ("no such file" if not Path(file).exists() else "not a file")
        )
    try:
        stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
    except OSError as e:
        raise Misuse(f"cannot read {file}: {e.strerror or e}") from None
    bar = Progress(progress, "importing", unit="bytes")
    committed = False
    interrupts = Interrupts()
    try:
        with interrupts, ExitStack() as stack:
            loader = _Loader(db_path, tls_ca, stack)

            def held_load(table: pa.Table, facts: Facts) -> None:
                with interrupts.held():
                    loader.add(table, facts)

            try:
                if file != "-":
                    bar.start(os.path.getsize(file))
                batch = prepare(
                    read_lines(stream, file),
                    source="standard input" if file == "-" else file,
                    workers=workers or default_workers(),
                    progress=bar.update,
                    load=held_load,
                    skip_bad=skip_bad,
                )
            finally:
                bar.finish()
                if file != "-":
                    stream.close()
            prepared, bad = batch.prepared, batch.bad
            if bad and not skip_bad:
                with interrupts.held():
                    loader.discard()
                for item in prepared:
                    if item.ok:
                        item.status = "skipped"
            else:
                with interrupts.held():
                    imported, present = loader.finish()
                    committed = True
                mark(prepared, imported, present)
    except KeyboardInterrupt:
        what = "the import was committed before" if committed else "nothing was imported"
        raise Misuse(f"interrupted: {what}") from None
    for item in prepared:
        click.echo(json_line(item.to_json()) if fmt == "jsonl" else item.to_text())
    counts = {
        s: sum(1 for p in prepared if p.status == s) for s in ("imported", "present", "repeat")
    }
    events = sum(p.events for p in prepared if p.status == "imported")
    click.echo(
        f"{db_path}: imported {counts['imported']} match{'es' if counts['imported'] != 1 else ''}"
        f" ({events:,} events); {counts['present'] + counts['repeat']} already there;"
        f" {len(bad)} bad" + (", so nothing was imported" if bad and not skip_bad else ""),
        err=True,
    )
    sys.exit(1 if bad else 0)


class _Loader:
    """Where the events go as the chunks are audited: straight into the log file, in one
    transaction kept open until the whole file is read (`EventLog.importing`), so the load
    runs beside the audit; or, while a service holds the log, kept for one ImportMatches
    call at the end. The file is opened at the first events to load, so an import that
    loads nothing leaves no file behind."""

    def __init__(self, db_path: str, tls_ca: str | None, stack: ExitStack) -> None:
        from service.storage import find_owner

        self.db_path, self.tls_ca, self.stack = db_path, tls_ca, stack
        self.direct = find_owner(db_path) is None
        self.tables: list[pa.Table] = []
        self.facts: list[Facts] = []
        self.loading: ImportLoad | None = None

    def add(self, table: pa.Table, facts: Facts) -> None:
        from service.storage import StorageError

        if self.direct and self.loading is None:
            self._open()
        if self.loading is None:
            self.tables.append(table)
            self.facts.append(facts)
            return
        try:
            self.loading.add(table, facts)  # made and chained here
        except StorageError as e:
            raise Misuse(db_error_line(self.db_path, e)) from None

    def _open(self) -> None:
        from service.storage import EventLog, LogLocked, StorageError

        try:
            log = EventLog(self.db_path)
        except LogLocked:
            self.direct = False  # a service took the file meanwhile: go through it
            return
        except (StorageError, OSError) as e:
            raise Misuse(db_error_line(self.db_path, e)) from None
        self.stack.enter_context(closing(log))
        self.loading = self.stack.enter_context(log.importing())

    def discard(self) -> None:
        """Nothing of the file goes in (it has a bad record)."""
        if self.loading is not None:
            self.loading.discard()
        self.stack.close()

    def finish(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Commit (or send) everything; the matches imported and those already there."""
        from service.storage import StorageError

        if self.loading is not None:
            try:
                self.stack.close()  # the commit, then the log's close
            except StorageError as e:
                raise Misuse(db_error_line(self.db_path, e)) from None
            result = self.loading.result()
            return result.imported, result.present
        if not self.tables:
            return (), ()
        return load_events(
            self.db_path, pa.concat_tables(self.tables), self.tls_ca, merged_facts(self.facts)
        )


def load_events(
    db_path: str, table: pa.Table, tls_ca: str | None, facts: Facts | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Write the rows through the service that holds the log, or into the file itself, with
    the matches' facts in the same transaction (through a service too)."""
    from analysis.logquery import import_through_service
    from service.storage import EventLog, LogLocked, StorageError, find_owner

    for _ in range(2):
        owner = find_owner(db_path)
        if owner is not None:
            try:
                reply = import_through_service(
                    owner, table.drop_columns(["logged_at"]), facts=facts, tls_ca=tls_ca
                )
            except Exception as e:  # the service's refusal
                details = getattr(e, "details", None)
                if callable(details):
                    raise Misuse(f"the service refused the import: {details()}") from None
                raise
            return tuple(reply.imported_match_ids), tuple(reply.present_match_ids)
        try:
            log = EventLog(db_path)
        except LogLocked:
            continue  # a service took the file meanwhile: go through it
        except (StorageError, OSError) as e:
            raise Misuse(db_error_line(db_path, e)) from None
        try:
            done = log.import_matches(table, verify=False, facts=facts)  # made and chained here
        except StorageError as e:
            raise Misuse(db_error_line(db_path, e)) from None
        finally:
            log.close()
        return done.imported, done.present
    raise Misuse(f"{db_path} is held by a process that does not advertise a service")


def db_error_line(db_path: str, exc: BaseException) -> str:
    text = first_line(str(exc))
    return text if db_path in text else f"{db_path}: {text}"
