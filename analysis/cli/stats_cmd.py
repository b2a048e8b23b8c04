"""`sniff stats`: the Sniff-timing statistics (docs/statistics.md) and match summaries."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from analysis.cli.errors import Misuse, first_line
from analysis.cli.formats import aligned, cell_text, format_option, write_csv, write_json
from analysis.cli.options import (
    db_option,
    need_ray,
    progress_option,
    ray_option,
    workers_option,
)
from analysis.stats.store import FactsStore, StatsError
from analysis.stats.timing import COLUMNS, ROUND_FACT_COLUMNS, Filters
from sniff import VARIANTS

F = TypeVar("F", bound=Callable[..., Any])


def _inputs(func: F) -> F:
    """Where the matches come from: the event log (default), a records file, or Parquet facts."""
    func = click.option(
        "--facts",
        "facts_dir",
        type=click.Path(file_okay=False),
        default=None,
        help="A directory of Parquet facts (written by 'sniff stats facts' or a simulation).",
    )(func)
    func = click.option(
        "--records",
        "records",
        type=click.Path(dir_okay=False),
        default=None,
        help="Match records (docs/records.md) instead of the log (read as imported matches; "
        "players from each record's 'players').",
    )(func)
    return db_option(func)


def _filters(func: F) -> F:
    options = [
        click.option("--seats", type=click.IntRange(2, 4), default=None, help="2, 3 or 4."),
        click.option(
            "--variant",
            type=click.Choice(list(VARIANTS)),
            default=None,
            help="Only matches of this variant.",
        ),
        click.option(
            "--bots",
            default=None,
            help="Only matches whose seats were played by these players in turn, the list "
            "repeated over the seats (greedy,random means greedy|random|greedy|random at 4).",
        ),
        click.option("--simulated", is_flag=True, help="Simulated matches (with --served etc.)."),
        click.option("--served", is_flag=True, help="Matches played through the service."),
        click.option("--imported", is_flag=True, help="Matches imported from records."),
        click.option("--run", default=None, help="Only the matches of this simulation run."),
        format_option(
            "table",
            "csv",
            "json",
            csv="docs/statistics.md's long form, one row a line",
            json="docs/statistics.md's long form, one document: an array of rows",
        ),
        click.option(
            "--plot",
            type=click.Path(dir_okay=False),
            default=None,
            help="Also draw the figures to FILE.png or FILE.svg (needs the 'plot' extra).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _make_filters(
    seats: int | None,
    variant: str | None,
    bots: str | None,
    simulated: bool,
    served: bool,
    imported: bool,
    run: str | None,
) -> Filters:
    names: tuple[str, ...] | None = None
    if bots is not None:
        names = tuple(n.strip() for n in bots.split(","))
        if not all(names):
            raise Misuse(f"--bots {bots!r}: name players separated by commas, like greedy,random")
    sources = tuple(
        s for s, on in (("simulated", simulated), ("served", served), ("imported", imported)) if on
    )
    return Filters(seats, variant, names, sources or None, run)


@contextmanager
def _store(
    db_path: str,
    records: str | None,
    facts_dir: str | None,
    keep: list[Any] | None = None,
    in_place: bool = True,
) -> Iterator[FactsStore]:
    """The facts of the chosen input: stored in the log, replayed from records, or Parquet;
    with `keep`, the matches are replayed and kept there too. The log's facts are read in
    place when no service holds the file (`in_place`: a copy for a caller that writes files
    of them, which a read-only open of the log may not)."""
    from analysis.stats.load import load_log, load_records_file

    ctx = click.get_current_context()
    db_given = ctx.get_parameter_source("db_path") not in (
        click.core.ParameterSource.DEFAULT,
        None,
    )
    chosen = [name for name, on in (("--records", records), ("--facts", facts_dir)) if on]
    if len(chosen) > 1 or (chosen and db_given):
        raise Misuse(f"give one input: {' or '.join(['--db', *chosen])}")
    try:
        in_log = None
        if records is None and facts_dir is None and keep is None and in_place:
            in_log = FactsStore.from_log(db_path)
        if in_log is not None:
            store = in_log
        elif facts_dir is not None:
            store = FactsStore.from_parquet(facts_dir)
        else:
            store = FactsStore.in_memory()
            if records is not None:
                load_records_file(store, records, keep)
            else:
                load_log(store, db_path, keep)
    except StatsError as e:
        raise Misuse(str(e)) from None
    try:
        yield store
    finally:
        store.close()


def _plot(path: str, draw: Callable[[str], None]) -> None:
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise Misuse(f"--plot {path}: name a .png or .svg file")
    from analysis.stats.plot import NothingToPlot

    try:
        draw(path)
    except NothingToPlot as e:
        raise Misuse(str(e)) from None
    except ModuleNotFoundError as e:
        if e.name != "matplotlib" and not (e.name or "").startswith("matplotlib."):
            raise
        raise Misuse(f"--plot needs matplotlib, which is not installed: {plot_install()}") from None
    except OSError as e:
        raise Misuse(f"cannot write {path}: {e.strerror or e}") from None


def plot_install() -> str:
    """The command that installs the plot extra into the environment `sniff` runs in.

    From a checkout (an editable install, the usual case) the extra of the
    checkout itself; otherwise matplotlib alone.
    """
    import shlex

    root = Path(__file__).resolve().parents[2]
    python = shlex.quote(sys.executable)
    if (root / "pyproject.toml").is_file():
        return f"{python} -m pip install -e {shlex.quote(f'{root}[plot]')}"
    return f"{python} -m pip install matplotlib"


def _text(value: Any) -> str:
    """A value as a cell: as every CSV of the command line writes it."""
    return cell_text(value)


def _write_long(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> None:
    values = ([r[c] for c in columns] for r in rows)
    (write_json if fmt == "json" else write_csv)(sys.stdout, columns, values)


def _number(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    return "\n".join(aligned(headers, rows, right))


@click.group()
def stats() -> None:
    """Statistics over logged, imported and simulated matches (docs/statistics.md).

    Example: sniff stats sniff-timing --records m.jsonl --format csv
    """


@stats.command("sniff-timing")
@_inputs
@_filters
@click.option(
    "--rounds-facts",
    is_flag=True,
    help="Print docs/statistics.md §1's round facts instead of the tables.",
)
@click.option(
    "--counterfactual",
    is_flag=True,
    help="Also estimate, at every Sniff decision, the rollout equity of the Sniff now minus "
    "the best other move, shown beside each observed row (cf_ columns).",
)
@click.option(
    "--rollouts",
    type=click.IntRange(2, 10_000),
    default=100,
    show_default=True,
    help="With --counterfactual: rollouts per legal move, 2 to 10,000.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=0,
    show_default=True,
    help="With --counterfactual: the rollouts' seed (each decision's is derived from it).",
)
@click.option(
    "--decisions",
    "decisions_out",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --counterfactual: also write every decision's rollout comparison to this CSV.",
)
@workers_option
@ray_option
@progress_option
def sniff_timing_cmd(
    db_path: str,
    records: str | None,
    facts_dir: str | None,
    seats: int | None,
    variant: str | None,
    bots: str | None,
    simulated: bool,
    served: bool,
    imported: bool,
    run: str | None,
    fmt: str,
    plot: str | None,
    rounds_facts: bool,
    counterfactual: bool,
    rollouts: int,
    seed: int,
    decisions_out: str | None,
    workers: int | None,
    ray_address: str | None,
    progress: bool,
) -> None:
    """The observed Sniff-timing value by bucket, the holding value by outcome (docs/statistics.md).

    Reads the facts the event log stores for its finished matches, a
    records file, or Parquet facts. Filters that keep no match are an error
    (exit 2), never an empty table. See docs/statistics.md for what each
    number means.

    With --counterfactual, every Sniff decision's position is replayed and
    the Sniff now is compared with the best other move by rollouts from the
    mover's view (common random numbers); each row gets the mean gain over
    its decisions (cf_gain, 95% interval clustered by round) and how often
    the logged choice was the rollouts' best (cf_agree).

    Example: sniff stats sniff-timing --records m.jsonl --seats 4 --format csv

    Example: sniff stats sniff-timing --records m.jsonl --counterfactual --rollouts 200
    """
    from analysis.stats import timing

    filters = _make_filters(seats, variant, bots, simulated, served, imported, run)
    if rounds_facts and plot is not None:
        raise Misuse("--plot draws the tables, not --rounds-facts: use one of them")
    if counterfactual and (facts_dir is not None or rounds_facts):
        raise Misuse(
            "--counterfactual replays the matches' positions: give --db or --records "
            "(not --facts), without --rounds-facts"
        )
    if decisions_out is not None and not counterfactual:
        raise Misuse("--decisions lists the --counterfactual decisions: add --counterfactual")
    if ray_address is not None and not counterfactual:
        raise Misuse("--ray runs the --counterfactual rollouts: add --counterfactual")
    need_ray(ray_address)
    kept: list[Any] | None = [] if counterfactual else None
    cf_rows: list[dict[str, Any]] | None = None
    cf_cells: dict[Any, Any] = {}
    with _store(db_path, records, facts_dir, kept) as store:
        try:
            if rounds_facts:
                selection, facts = timing.rounds_facts(store, filters)
            else:
                result = timing.sniff_timing(store, filters)
                selection = result.selection
        except StatsError as e:
            raise Misuse(str(e)) from None
        if counterfactual:
            cf_rows, cf_cells = _counterfactual(
                store,
                kept or [],
                result.rows,
                rollouts,
                seed,
                workers,
                progress,
                decisions_out,
                ray_address,
            )
    if rounds_facts:
        if fmt == "table":
            headers = list(ROUND_FACT_COLUMNS)
            cells = [[_text(r[c]) for c in headers] for r in facts]
            click.echo(render_table(headers, cells, set(range(1, len(headers)))))
            click.echo(_selection_line(selection))
        else:
            _write_long(facts, ROUND_FACT_COLUMNS, fmt)
        return
    if plot is not None:
        from analysis.stats.plot import plot_timing

        _plot(plot, lambda path: plot_timing(result.rows, path, filters.describe(), cf_cells))
    if fmt != "table":
        if cf_rows is not None:
            from analysis.stats.counterfactual import CF_COLUMNS

            _write_long(cf_rows, (*COLUMNS, *CF_COLUMNS), fmt)
        else:
            _write_long([c.as_dict() for c in result.rows], COLUMNS, fmt)
        return
    click.echo(_selection_line(selection))
    for statistic, title in (
        ("timing", "Observed timing value: value of the round for the maker's side"),
        ("holding", "Holding value: value of the round for the mover's side, per decision"),
    ):
        for seat_group in ("2", "3", "4", "all"):
            rows = [c for c in result.rows if c.statistic == statistic and c.seats == seat_group]
            if not rows:
                continue
            label = "all seat counts" if seat_group == "all" else f"{seat_group} seats"
            click.echo(f"\n{title} ({label}); 95% Student t interval")
            cells = [
                [
                    c.factor,
                    c.level,
                    c.cell,
                    str(c.n),
                    str(c.rounds),
                    _number(c.mean),
                    _number(c.ci_low),
                    _number(c.ci_high),
                ]
                for c in rows
            ]
            headers = ["factor", "level", "cell", "n", "rounds", "mean", "ci_low", "ci_high"]
            if cf_rows is not None:
                headers += ["cf_n", "cf_gain", "cf_low", "cf_high", "agree"]
                for cell, c in zip(cells, rows, strict=True):
                    cf = cf_cells.get((c.statistic, c.seats, c.factor, c.level, c.cell))
                    cell += (
                        ["", "", "", "", ""]
                        if cf is None
                        else [
                            str(cf.n),
                            _number(cf.gain),
                            _number(cf.ci_low),
                            _number(cf.ci_high),
                            f"{cf.agree:.0%}",
                        ]
                    )
            click.echo(render_table(headers, cells, set(range(3, len(headers)))))
    if cf_rows is not None:
        click.echo(
            "\ncf_: rollout equity of the Sniff now minus the best other move at the row's "
            "decisions (timing rows: every decision at that bucket), mean and 95% interval "
            "clustered by round; agree: the logged choice was the rollouts' best"
        )


def _counterfactual(
    store: FactsStore,
    kept: list[Any],
    rows: Sequence[Any],
    rollouts: int,
    seed: int,
    workers: int | None,
    progress: bool,
    decisions_out: str | None,
    ray_address: str | None = None,
) -> tuple[list[dict[str, Any]], dict[Any, Any]]:
    """The observed rows with their counterfactual columns, and the cells by row key."""
    from analysis.cli.progress import Progress
    from analysis.parallel import default_workers
    from analysis.stats.counterfactual import DECISION_COLUMNS, cf_cells, gains_of, with_cf

    bar = Progress(progress, "rollouts")
    bar.start(max(1, -(-len(kept) // 4)))
    try:
        gains = gains_of(
            store, kept, rollouts, seed, workers or default_workers(), bar.update, ray_address
        )
    finally:
        bar.finish()
    cells, decisions = cf_cells(store, gains)
    if decisions_out is not None:
        try:
            with open(decisions_out, "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(DECISION_COLUMNS)
                for d in decisions:
                    writer.writerow([_text(d[c]) for c in DECISION_COLUMNS])
        except OSError as e:
            raise Misuse(f"cannot write {decisions_out}: {e.strerror or e}") from None
    return with_cf(rows, cells), cells


def _selection_line(selection: Any) -> str:
    return (
        f"{selection.matches} matches, {selection.complete_rounds} complete rounds; "
        f"{selection.incomplete_rounds} rounds left out as incomplete "
        "(cut by the match win, or still in play)"
    )


@stats.command("facts")
@_inputs
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Directory for the Parquet facts (one subdirectory per table).",
)
@click.option("--part", default="facts", show_default=True, help="File name of this part.")
def facts_cmd(
    db_path: str, records: str | None, facts_dir: str | None, out_dir: str, part: str
) -> None:
    """Replay matches once and save their facts as Parquet, for fast statistics later.

    Writing the same part name again replaces it instead of duplicating rows.

    Example: sniff stats facts --records m.jsonl -o facts/
    then:    sniff stats sniff-timing --facts facts/
    """
    if facts_dir is not None:
        raise Misuse("sniff stats facts reads --db or --records, not --facts")
    if not part or "/" in part or part.startswith("."):
        raise Misuse(f"--part {part!r}: a plain file name")
    with _store(db_path, records, None, in_place=False) as store:
        try:
            store.write_parquet(out_dir, part)
        except (OSError, Exception) as e:  # duckdb.IOException carries no errno
            raise Misuse(f"cannot write facts to {out_dir}: {e}") from None
        counts = {t: store.count(t) for t in ("match_facts", "round_facts", "sniff_decisions")}
    click.echo(
        f"wrote {counts['match_facts']} matches, {counts['round_facts']} rounds, "
        f"{counts['sniff_decisions']} Sniff decisions to {out_dir}"
    )


SUMMARY_TITLES = {
    "match_win_rate": "Matches won (finished matches; a draw at the round limit is not a win)",
    "round_win_rate": "Rounds won (complete rounds: the side's net result strictly highest)",
    "points_per_placement": "Points per placement",
    "scoring_share": "Share of placements that score",
    "points_per_round": "Points scored by the seat's own placements, per complete round",
    "deductions_per_round": "Deductions suffered by the seat's hand, per complete round",
    "domino_rate": "Rounds the seat dominoed",
    "blocked_rate": "Rounds that blocked",
    "rounds_per_match": "Rounds per finished match",
    "leader_round_win_rate": "The round leader's advantage: rounds won by the leader's side",
    "first_mover_match_win_rate": "First-mover advantage: matches won by round 0's leader's side",
}


@stats.command("summary")
@_inputs
@_filters
def summary_cmd(
    db_path: str,
    records: str | None,
    facts_dir: str | None,
    seats: int | None,
    variant: str | None,
    bots: str | None,
    simulated: bool,
    served: bool,
    imported: bool,
    run: str | None,
    fmt: str,
    plot: str | None,
) -> None:
    """Who wins and how points are made and lost: per seat, per bot and overall.

    Proportions carry a 95% Wilson interval, per-seat means a 95% Student t
    interval over rounds (or matches); see docs/statistics.md.

    Example: sniff stats summary --records m.jsonl --seats 2 --plot summary.png
    """
    from analysis.stats import summary

    filters = _make_filters(seats, variant, bots, simulated, served, imported, run)
    with _store(db_path, records, facts_dir) as store:
        try:
            result = summary.summary(store, filters)
        except StatsError as e:
            raise Misuse(str(e)) from None
    if plot is not None:
        from analysis.stats.plot import plot_summary

        _plot(plot, lambda path: plot_summary(result.rows, path, filters.describe()))
    if fmt != "table":
        _write_long(result.rows, summary.COLUMNS, fmt)
        return
    click.echo(_selection_line(result.selection))
    for statistic in summary.STATISTICS:
        rows = [r for r in result.rows if r["statistic"] == statistic]
        if not rows:
            continue
        click.echo(f"\n{SUMMARY_TITLES[statistic]}")
        digits = 4 if statistic.endswith(("rate", "share")) else 2
        cells = [
            [
                r["seats"],
                r["by"],
                r["level"],
                str(r["n"]),
                _number(r["value"], digits),
                _number(r["ci_low"], digits),
                _number(r["ci_high"], digits),
                r["interval"],
            ]
            for r in rows
        ]
        headers = ["seats", "by", "level", "n", "value", "ci_low", "ci_high", "interval"]
        click.echo(render_table(headers, cells, {3, 4, 5, 6}))


_PLAYER_SHOWN = (
    ("player", "player"),
    ("phase", "phase"),
    ("matches", "matches"),
    ("decisions", "decisions"),
    ("rating", "rating"),
    ("rating_low", "low"),
    ("rating_high", "high"),
    ("error_rate", "errors"),
    ("accuracy", "accuracy"),
    ("exact", "exact"),
)


@stats.command("players")
@click.option(
    "--records",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="The analyses of this records file (default: those of --db).",
)
@click.option(
    "--run", default=None, help="Only the matches of this run (simulation or tournament)."
)
@click.option(
    "--since",
    type=click.DateTime(),
    default=None,
    help="Only the matches created at or after this time (UTC), e.g. 2026-12-01.",
)
@click.option("--rollouts", type=int, default=None, help="Only analyses of this many rollouts.")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="... of this seed.")
@format_option("table", "csv", "json", csv="one row a player and phase", json="an array of rows")
@db_option
def players_cmd(
    records: str | None,
    run: str | None,
    since: Any,
    rollouts: int | None,
    seed: int | None,
    fmt: str,
    db_path: str,
) -> None:
    """How well each player decided, over the decisions `sniff analyze` stored: per player,
    over all its decisions and per phase (the lead, Sniff decisions, play with the boneyard
    open, with it empty), its performance rating (100 x mean equity lost a decision; 0 is
    perfect), error rate and accuracy (the best move played), with 95% intervals clustered
    by match (docs/analysis.md, Performance).

    Example: sniff stats players --run tournament-3f2a9c0d1e
    """
    import duckdb

    from analysis.rollout.store import NoAnalyses, store_root
    from analysis.stats.players import COLUMNS, performance

    if records is not None and (run is not None or since is not None):
        raise Misuse("--run and --since select matches of the log: leave out --records")
    match_ids = None
    if run is not None or since is not None:
        match_ids = _log_match_ids(db_path, run, since)
    root = store_root(records if records is not None else db_path)
    try:
        result = performance(root, match_ids=match_ids, rollouts=rollouts, seed=seed)
    except NoAnalyses as e:
        raise Misuse(str(e)) from None
    except ValueError as e:
        raise Misuse(str(e)) from None
    except duckdb.Error as e:
        raise Misuse(f"the stored analyses cannot be read: {first_line(str(e))}") from None
    chosen = result.settings
    said = f"{chosen.rollouts} rollouts, {chosen.policy}, seed {chosen.seed}" + (
        ", rollouts only" if chosen.rollouts_only else ", exact where possible"
    )
    if result.settings_found > 1:
        click.echo(
            f"Note: the store holds {result.settings_found} sets of settings; using {said} "
            "(the most decisions; choose with --rollouts and --seed)",
            err=True,
        )
    if fmt != "table":
        _write_long(result.rows, COLUMNS, fmt)
        return
    click.echo(f"analyses of {said}; rating = 100 x mean equity lost a decision, 95% CI by match")
    cells = [
        [
            _text(r[key])
            if key in ("player", "phase", "matches", "decisions", "exact")
            else _number(r[key], 3 if key in ("error_rate", "accuracy") else 1)
            for key, _ in _PLAYER_SHOWN
        ]
        for r in result.rows
    ]
    click.echo(
        render_table([h for _, h in _PLAYER_SHOWN], cells, set(range(2, len(_PLAYER_SHOWN))))
    )


def _log_match_ids(db_path: str, run: str | None, since: Any) -> list[str]:
    """The log's matches of `run` and/or created since `since` (read as every command reads
    the log: through its service, or the file)."""
    from datetime import UTC

    from analysis.logquery import NoLog, query_log
    from service.storage import StorageError

    sql = (
        "SELECT match_id FROM matches WHERE ($1::VARCHAR IS NULL OR run_id = $1) "
        "AND ($2::TIMESTAMPTZ IS NULL OR created_at >= $2) ORDER BY match_id"
    )
    when = None if since is None else since.replace(tzinfo=UTC)
    try:
        table, _ = query_log(db_path, sql, [run, when])
    except (NoLog, StorageError) as e:
        raise Misuse(str(e)) from None
    ids = [str(m) for m in table.column(0).to_pylist()]
    if not ids:
        raise Misuse("no match of the log is selected by --run and --since")
    return ids
