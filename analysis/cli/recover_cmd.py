"""`sniff recover`: the one offline command that writes to an event log file."""

from __future__ import annotations

from pathlib import Path

import click

from analysis.cli.errors import Misuse
from analysis.cli.options import db_option


@click.command()
@db_option
@click.option(
    "--salvage",
    is_flag=True,
    help="Over a damaged journal: load its intact records, move it aside, record the loss.",
)
def recover(db_path: str, salvage: bool) -> None:
    """Load a leftover journal into the event log file and upgrade its schema.

    A service that stopped without closing its log (a crash, a kill, a power
    cut) leaves acknowledged events in DB.journal that the database file
    lacks. `sniff query` reads them without changing any file; this command
    writes them into the database for good, empties the journal, and
    migrates a file of an older schema version to the current one. The
    service does the same by itself when it opens the file.

    It changes the file: to keep evidence as it is, run it on a copy.

    A journal damaged before its last record (not a write cut short by the
    crash, which was never acknowledged) would lose acknowledged events:
    recover then refuses, names the byte where the damage starts and how
    many intact records follow, and changes nothing. With --salvage it loads
    every intact record that continues its match, moves the damaged journal
    aside (DB.journal.damaged-TIME, kept whole), and records in the log
    which matches may have lost events; `sniff audit --db` reports them.

    Example: sniff recover --db sniff.duckdb
    """
    from service.storage import (
        SCHEMA_VERSION,
        EventLog,
        JournalDamaged,
        LogLocked,
        SchemaVersionError,
        StorageError,
        find_owner,
    )

    path = Path(db_path)
    if not path.is_file():
        raise Misuse(f"no event log at {path}")
    owner = find_owner(path)
    if owner is not None:
        raise Misuse(
            f"{path} is held by the service (pid {owner.pid}, {owner.address}),"
            " which loads its own journal: nothing to recover"
        )
    try:
        log = EventLog(path, salvage=salvage)
    except JournalDamaged as e:
        raise Misuse(str(e)) from None
    except LogLocked as e:
        raise Misuse(f"{e}: stop that process first") from None
    except (SchemaVersionError, StorageError) as e:
        raise Misuse(str(e)) from None
    try:
        opening = log.opening
    finally:
        log.close()
    salvaged = opening.salvaged
    if salvaged is not None:
        click.echo(
            f"{path}: salvaged a journal damaged at byte {salvaged.damaged_at}:"
            f" loaded {salvaged.loaded} intact records, {salvaged.unloadable} could not be"
            f" loaded; {len(salvaged.match_ids)} matches may have lost events"
            f" (sniff audit --db reports them); the journal is kept at {salvaged.moved_to}"
        )
    elif opening.journal_rows:
        click.echo(
            f"{path}: loaded {opening.loaded_rows} journal rows"
            f" ({opening.journal_rows - opening.loaded_rows} were already in the file)"
        )
    else:
        click.echo(f"{path}: no journal rows to load")
    if opening.version_found is not None and opening.version_found < SCHEMA_VERSION:
        click.echo(
            f"{path}: schema upgraded from version {opening.version_found} to {SCHEMA_VERSION}"
        )
