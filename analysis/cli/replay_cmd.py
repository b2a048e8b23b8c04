"""`sniff matches` and `sniff replay`: finding matches in the log and watching them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from analysis.cli.errors import Misuse as CommandError
from analysis.cli.errors import ProblemFound, first_line
from analysis.cli.formats import format_option, json_line
from analysis.cli.options import db_option

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def replay_errors() -> Iterator[None]:
    """Turn what reading the log can raise into one clear line."""
    try:
        yield
    except Exception as e:
        failure = _one_line(e)
        if failure is None:
            raise
        raise failure from None


def _one_line(e: Exception) -> click.ClickException | None:
    """The one-line error for what reading or replaying the log raised; None if unexpected.

    The exception classes are imported here, once something went wrong, so
    that a listing that succeeds never loads the replay model and the engine.
    """
    from analysis.logquery import NoLog, UnknownMatch
    from analysis.regenerate import CannotRegenerate
    from analysis.replay.model import ReplayError
    from service.storage import LogLocked, SchemaVersionError, StorageError
    from sniff import UnknownVariant

    if isinstance(e, NoLog | SchemaVersionError | UnknownMatch | UnknownVariant | CannotRegenerate):
        return CommandError(str(e))
    if isinstance(e, LogLocked):
        return CommandError(str(e))
    if isinstance(e, StorageError):
        return CommandError(first_line(str(e)))
    if isinstance(e, ReplayError):
        return ProblemFound(str(e))
    details = getattr(e, "details", None)  # a refusal from the service's Query RPC
    if callable(details):
        return CommandError(f"the service refused the query: {details()}")
    return None


def _write(path: str, text: str) -> None:
    """Write all of `text` or nothing: a temporary file beside it, then a rename."""
    import tempfile

    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.")
    except OSError as e:
        raise CommandError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise CommandError(f"cannot write {path}: {e.strerror or e}") from None


# -- sniff matches ------------------------------------------------------------------------------


def _time_option(name: str, end_of_day: bool, help_text: str) -> Callable[[F], F]:
    def convert(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
        if value is None:
            return None
        from analysis.replay.source import BadTime, parse_time

        try:
            return parse_time(value, end_of_day=end_of_day)
        except BadTime as e:
            raise CommandError(f"{name}: {e}") from None

    return click.option(name, callback=convert, metavar="DATE|TIME", help=help_text)


@click.command()
@click.option("--seats", type=click.Choice(["2", "3", "4"]), help="Only matches of this size.")
@_time_option("--since", False, "Created at or after (2025-05-01 or 2025-05-01T14:30; UTC).")
@_time_option("--until", True, "Created before (a date keeps that whole day).")
@click.option(
    "--finished/--unfinished", default=None, help="Only finished, or only unfinished, matches."
)
@click.option(
    "--winner",
    type=click.IntRange(0, 3),
    metavar="SEAT",
    help="Won by this seat (with partners, by its side).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="At most this many, newest first (0: all).",
)
@format_option(
    "table",
    "csv",
    "json",
    "jsonl",
    json="one document: an array of matches",
    jsonl="one object a match",
)
@db_option
def matches(
    seats: str | None,
    since: Any,
    until: Any,
    finished: bool | None,
    winner: int | None,
    limit: int,
    fmt: str,
    db_path: str,
) -> None:
    """List the log's matches, newest first: id, seats, variant, created, rounds, result.

    Reads the log through a running service when one holds it, else the file.

    Example: sniff matches --seats 4 --finished --since 2025-05-01 --limit 20
    """
    from analysis.replay.source import MatchFilter, list_matches

    where = MatchFilter(
        seats=None if seats is None else int(seats),
        since=since,
        until=until,
        finished=finished,
        winner=winner,
        limit=limit or None,
    )
    with replay_errors():
        rows = list_matches(db_path, where)
    if fmt != "table":
        from analysis.cli.formats import write_result
        from analysis.replay.source import MatchRow

        write_result(fmt, MatchRow.COLUMNS, (r.values() for r in rows), sys.stdout)
        return
    header = ["match_id", "seats", "variant", "created", "rounds", "finished", "winners", "scores"]
    cells = [
        [
            r.match_id,
            str(r.seats),
            r.variant,
            "" if r.created_at is None else r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(r.rounds),
            "yes" if r.finished else "no",
            r.winners,
            "" if r.scores is None else " ".join(str(s) for s in r.scores),
        ]
        for r in rows
    ]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(header)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for c in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)).rstrip())
    click.echo(f"({len(rows)} match{'es' if len(rows) != 1 else ''})")


# -- sniff replay -------------------------------------------------------------------------------


@click.command()
@click.argument("match_id", metavar="MATCH")
@click.option(
    "--round", "round_index", type=click.IntRange(min=0), help="Only this round (from 0)."
)
@click.option(
    "--at",
    "at",
    type=click.IntRange(min=0),
    metavar="N",
    help="Only the position after the match's action N, counted from 0 over the whole match"
    " (the first lead is 0).",
)
@format_option(
    "text",
    "json",
    "jsonl",
    json="one JSON document: the match and its steps",
    jsonl="one object a step",
)
@click.option("--reveal", is_flag=True, help="Show drawn tiles and deals (finished matches).")
@click.option("--tally", is_flag=True, help="Draw the traditional tally (docs/rules.md §9).")
@click.option("--svg", "svg_path", metavar="FILE", help="Write the position as SVG.")
@click.option("--html", "html_path", metavar="FILE", help="Write the whole match as an HTML page.")
@click.option(
    "--analysis/--no-analysis",
    "with_analysis",
    default=True,
    show_default=True,
    help="With --html: mark each decision's equity lost and best move, from what sniff "
    "analyze stored for the match (if it did).",
)
@db_option
def replay(
    match_id: str,
    round_index: int | None,
    at: int | None,
    fmt: str,
    reveal: bool,
    tally: bool,
    svg_path: str | None,
    html_path: str | None,
    with_analysis: bool,
    db_path: str,
) -> None:
    """Replay a match step by step: moves, layout, open sides, counted ends, points, scores.

    With --svg, write the position after --at N (default: the last action,
    of --round R if given) as a picture; with --html, the whole match as one
    self-contained page (slider, arrow keys). --format jsonl prints one JSON
    object a step, --format json one document: the match id and its steps.

    Example: sniff replay 3f2a9c0d1e2b4a5c --round 2 --tally
    """
    from analysis.replay.source import load_replay

    if at is not None and round_index is not None:
        raise CommandError("give --at N or --round R, not both")
    with replay_errors():
        rp = load_replay(
            db_path, match_id, reveal=reveal, regenerated=lambda note: click.echo(note, err=True)
        )
    steps = list(rp.steps)
    if not steps:
        raise CommandError(f"match {match_id} has no action yet")
    if round_index is not None:
        steps = [s for s in steps if s.round == round_index]
        if not steps:
            last = rp.steps[-1].round
            raise CommandError(f"match {match_id} has rounds 0 to {last}, not {round_index}")
    if at is not None:
        if at >= len(rp.steps):
            raise CommandError(f"match {match_id} has actions 0 to {len(rp.steps) - 1}, not {at}")
        steps = [rp.steps[at]]
    wrote = False
    if svg_path is not None:
        from analysis.replay.svg import position_svg

        _write(svg_path, position_svg(rp, steps[-1]))
        wrote = True
    if html_path is not None:
        from analysis.replay.html import match_page

        judged, luck = _stored_analysis(db_path, match_id) if with_analysis else (None, None)
        _write(html_path, match_page(rp, judged, luck))
        wrote = True
    if wrote:
        return
    if fmt == "jsonl":
        for step in steps:
            click.echo(json_line({"match_id": rp.info.match_id, **step.to_json()}))
        return
    if fmt == "json":
        doc: dict[str, object] = {"match_id": rp.info.match_id}
        if rp.info.forfeited_seat is not None:
            doc["forfeited_seat"] = rp.info.forfeited_seat  # out of time (docs/service.md)
        doc["steps"] = [step.to_json() for step in steps]
        click.echo(json_line(doc))
        return
    from analysis.replay.text import replay_text

    click.echo(replay_text(rp, steps, tally=tally, at=at is not None))


def _stored_analysis(db_path: str, match_id: str) -> tuple[Any, Any]:
    """What `sniff analyze` stored of the match beside the log: its decisions and the luck of
    its chance events (None for what is not stored), said on stderr: the page marks them."""
    import duckdb

    from analysis.rollout.store import NoAnalyses, match_analysis, match_luck_events, store_root

    root = store_root(db_path)
    try:
        judged, said = match_analysis(root, match_id)
    except NoAnalyses:
        return None, None
    except duckdb.Error as e:
        click.echo(f"Note: the stored analyses cannot be read, none shown: {e}", err=True)
        return None, None
    try:
        luck = match_luck_events(root, match_id) or None
    except duckdb.Error as e:
        click.echo(f"Note: the stored luck cannot be read, none shown: {e}", err=True)
        luck = None
    luck_said = (
        "" if luck is None else f", and the luck of {sum(map(len, luck.values()))} chance events"
    )
    click.echo(
        f"Note: the page shows the stored analysis of {len(judged)} decisions ({said}){luck_said}",
        err=True,
    )
    return judged, luck
