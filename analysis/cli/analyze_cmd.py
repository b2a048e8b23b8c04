"""`sniff analyze` (per-move equity by rollouts) and `sniff analysis` (SQL over stored analyses)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from analysis.cli.errors import Misuse, first_line
from analysis.cli.formats import format_option, json_line, render_table, write_csv, write_result
from analysis.cli.options import (
    db_option,
    need_ray,
    progress_option,
    ray_option,
    result_format_option,
    seed_option,
)
from analysis.cli.params import HELP as PARAM_HELP
from analysis.cli.params import PARAM
from analysis.cli.progress import Progress

ANALYZE_ROLLOUTS_MAX = 100_000
"""Samples per move: 100,000 on a decision of 10 moves is a minute or so of one core."""
WORKERS_MAX = 256


@click.command()
@click.argument("match_ids", metavar="[MATCH]...", nargs=-1)
@click.option(
    "--records",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Analyse the matches of a records file (docs/records.md) instead of the log's.",
)
@click.option("--seat", type=click.IntRange(0, 3), default=None, help="Only this seat's decisions.")
@click.option(
    "--rollouts",
    type=click.IntRange(2, ANALYZE_ROLLOUTS_MAX),
    default=200,
    show_default=True,
    help=f"Sampled deals per legal move, 2 to {ANALYZE_ROLLOUTS_MAX:,} (every move is played "
    "out on the same ones).",
)
@click.option(
    "--bot",
    "policy",
    type=click.Choice(["greedy", "random"]),
    default="greedy",
    show_default=True,
    help="The built-in bot that plays the rest of the round in every rollout, for every seat.",
)
@seed_option(0, "Seed of the rollouts; each decision's is derived from it and its place.")
@click.option(
    "--workers",
    type=click.IntRange(1, WORKERS_MAX),
    default=None,
    help="Processes to use (default: every core). The results do not depend on it.",
)
@format_option(
    "table",
    "csv",
    "json",
    table="decisions and players for people",
    csv="one row a decision",
    json="one document with every move's equity",
)
@click.option(
    "--store/--no-store",
    default=True,
    show_default=True,
    help="Keep the results as Parquet under <db>.analysis/ (or <FILE>.analysis/).",
)
@click.option(
    "--exact/--no-exact",
    default=True,
    show_default=True,
    help="Solve exactly the decisions where the mover sees every tile (2 seats, an empty "
    "boneyard): values under perfect play, no standard error (column exact).",
)
@click.option(
    "--par",
    is_flag=True,
    help="Also the double-dummy par of every deal (every tile seen by every seat, perfect "
    "play: the exact solver) and each seat's result against it.",
)
@click.option(
    "--luck/--no-luck",
    default=True,
    show_default=True,
    help="Also the luck of every chance event (the lot, each deal, each draw), per round and "
    "match, and each seat's luck-adjusted result (docs/analysis.md, Luck).",
)
@click.option(
    "--luck-rollouts",
    type=click.IntRange(2, ANALYZE_ROLLOUTS_MAX),
    default=400,
    show_default=True,
    help="Sampled deals per equity estimate of the luck (one playout each).",
)
@ray_option
@progress_option
@db_option
def analyze(
    match_ids: tuple[str, ...],
    records: str | None,
    seat: int | None,
    rollouts: int,
    policy: str,
    seed: int,
    workers: int | None,
    fmt: str,
    store: bool,
    progress: bool,
    db_path: str,
    exact: bool,
    ray_address: str | None,
    par: bool,
    luck: bool,
    luck_rollouts: int,
) -> None:
    """What each move was worth: equity by rollouts at every decision of a match.

    A decision is a turn with more than one legal move. Each is analysed
    from the mover's own view (its hand, the layout, the public history;
    hidden tiles are sampled exactly from what it saw). The equity of a move
    is the expected round net result for the mover's side from there on:
    its points for the rest of the round minus its deductions, minus the
    same for the other side (with 3 seats, the mean of the two others). Every
    move is played out on the same sampled deals and seeds (common random
    numbers), and each figure has its standard error.

    For each decision: the best move, the equity lost by the move played, an
    error flag (loss beyond 2 standard errors) and a large-loss flag (an
    error losing more than 5 points); per player: decisions, total and mean
    equity lost, error rate. With --luck (the default), per match and seat:
    the net result, the luck of the chance events (the lot, the deals, the
    draws: each the change it made to the equity of the side it happened to,
    the other sides' luck counted against it), the equity lost by decisions,
    and the luck-adjusted result (result minus luck), with standard errors.
    Matches of the log must be over (their deals are hidden while in play).
    Results are stored as Parquet beside the log (query them with sniff
    analysis). Exit 2 for an unknown match, a match in
    play, a record that does not replay.

    \b
    Example: sniff analyze 3f2a9c0d1e2b4a5c --rollouts 400 --format json
    Example: sniff analyze --records matches.jsonl --seat 0 --seed 7
    """
    from analysis.rollout.analyze import (
        ERROR_SE,
        LARGE_LOSS,
        Settings,
        analyse,
        count_decisions,
        players,
    )
    from analysis.rollout.luck import LuckSettings, luck_rows
    from analysis.rollout.source import SourceError, specs_from_log, specs_from_records
    from analysis.rollout.store import store_root, write_luck, write_results

    if bool(match_ids) == bool(records):
        raise Misuse("name the matches of the log to analyse, or give --records FILE (not both)")
    try:
        if records is not None:
            specs = specs_from_records(records)
        else:
            with _log_errors():
                specs = specs_from_log(db_path, _unique(match_ids))
    except SourceError as e:
        raise Misuse(str(e)) from None
    if seat is not None:
        for spec in specs:
            if seat >= spec.seats:
                raise Misuse(
                    f"--seat {seat}: match {spec.match_id} has seats 0 to {spec.seats - 1}"
                )
    need_ray(ray_address)
    settings = Settings(rollouts, policy, seed, exact)
    total = count_decisions(specs, seat)
    bar = Progress(progress, "analysing", unit="decisions")
    bar.start(total)
    try:
        results = analyse(
            specs,
            settings,
            seat=seat,
            workers=workers,
            progress=bar.update,
            ray_address=ray_address,
        )
    finally:
        bar.finish()
    lucks = (
        _lucks(specs, luck_rollouts, policy, seed, workers, ray_address, progress) if luck else None
    )
    if store:
        root = store_root(records if records is not None else db_path)
        try:
            write_results(root, specs, results, settings, seat)
            if lucks is not None:
                write_luck(root, lucks, LuckSettings(luck_rollouts, policy, seed))
        except OSError as e:
            raise Misuse(f"cannot store the results under {root}: {e.strerror or e}") from None
    summary = players(results)
    seat_rows = luck_rows(lucks, results, seat) if lucks is not None else None
    pars = _pars(specs, workers, ray_address) if par else None
    if fmt == "json":
        doc = {
            "settings": {
                "rollouts": rollouts,
                "policy": policy,
                "seed": seed,
                "exact": exact,
                "seat": seat,
                "large_loss": LARGE_LOSS,
                "error_se": ERROR_SE,
            },
            "matches": [s.match_id for s in specs],
            "decisions": [r.to_json() for r in results],
            "players": [p.to_json() for p in summary],
            **({"pars": [p.to_json() for p in pars]} if pars is not None else {}),
            **(
                {
                    "luck": {
                        "rollouts": luck_rollouts,
                        "seats": [r.to_json() for r in seat_rows or ()],
                        "rounds": [r.to_json() for m in lucks for r in m.rounds],
                        "events": [e.to_json() for m in lucks for e in m.events],
                    }
                }
                if lucks is not None
                else {}
            ),
        }
        click.echo(json_line(doc))
        return
    from analysis.rollout.analyze import DECISION_COLUMNS

    rows = [[getattr(r, c) for c in DECISION_COLUMNS] for r in results]
    if fmt == "csv":
        write_csv(sys.stdout, DECISION_COLUMNS, rows)
        return
    click.echo(
        f"{len(results)} decisions of {len(specs)} match{'es' if len(specs) != 1 else ''}: "
        f"{rollouts} rollouts a move, {policy} playouts, seed {seed}"
    )
    shown = [
        [
            r.match_id,
            f"{r.round}.{r.action}",
            r.seat,
            r.played,
            r.best,
            f"{r.loss:.2f}",
            f"{r.loss_se:.2f}",
            "LARGE" if r.large else "error" if r.error else "",
            "exact" if r.exact else "rollouts",
        ]
        for r in results
    ]
    header = ["match", "round.action", "seat", "played", "best", "lost", "se", "flag", "by"]
    click.echo(render_table(header, shown))
    click.echo(
        render_table(
            ["player", "decisions", "total lost", "mean lost", "errors", "error rate", "large"],
            [
                [
                    p.player,
                    p.decisions,
                    f"{p.total_loss:.2f}",
                    f"{p.mean_loss:.3f}",
                    p.errors,
                    f"{p.error_rate:.3f}",
                    p.large,
                ]
                for p in summary
            ],
        )
    )
    if seat_rows is not None:
        click.echo(
            f"\nluck ({luck_rollouts} rollouts an estimate) and skill per match and seat: "
            "result minus luck is the luck-adjusted result"
        )
        click.echo(
            render_table(
                ["match", "seat", "player", "result", "luck", "se", "lost", "se", "adjusted"],
                [
                    [
                        r.match_id,
                        r.seat,
                        r.player,
                        f"{r.result:+g}",
                        f"{r.luck:+.1f}",
                        f"{r.luck_se:.1f}",
                        f"{r.lost:.1f}",
                        f"{r.lost_se:.1f}",
                        f"{r.adjusted:+.1f}",
                    ]
                    for r in seat_rows
                ],
            )
        )
    if pars is not None:
        click.echo("\ndouble-dummy par of each deal (the leader's side), and each seat against it")
        click.echo(
            render_table(
                ["match", "round", "leader", "par", "played", "against par (per seat)", "nodes"],
                [
                    [
                        p.match_id,
                        p.round,
                        p.leader,
                        f"{p.low:g}" if p.solved else f"{p.low:g}..{p.high:g} (not solved)",
                        f"{p.played[p.leader]:g}",
                        "" if p.against_par is None else " ".join(f"{v:+g}" for v in p.against_par),
                        p.nodes,
                    ]
                    for p in pars
                ],
            )
        )


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _log_errors() -> Any:
    from analysis.cli.replay_cmd import replay_errors

    return replay_errors()


_ANALYSIS_HELP = """Run SQL over the analyses `sniff analyze` stored.

Two views: `decisions` (one row a decision: match_id, seats, variant,
round, action, move_number, seat, player, legal, played, best,
played_equity, played_se, best_equity, best_se, loss, loss_se, error,
large, decision_seed, exact, phase, rollouts, policy, seed) and `moves` (one row a legal
move of each decision: match_id, round, action, seat, move, rank, equity,
se, loss, loss_se, played, rollouts, policy, seed). docs/analysis.md
describes each column.

\b
Example: sniff analysis "SELECT player, count(*) AS n, avg(loss) AS mean_lost,
           avg(error::INT) AS error_rate FROM decisions WHERE rollouts = ?
           GROUP BY player ORDER BY mean_lost" -p int:200
"""


@click.command(help=_ANALYSIS_HELP)
@click.argument("sql")
@click.option("-p", "--param", "params", multiple=True, type=PARAM, help=PARAM_HELP)
@click.option(
    "--records",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="The analyses of this records file (default: those of --db).",
)
@result_format_option
@db_option
def analysis(
    sql: str, params: tuple[object, ...], records: str | None, fmt: str, db_path: str
) -> None:
    import duckdb

    from analysis.rollout.store import NoAnalyses, query_analyses, store_root

    root = store_root(records if records is not None else db_path)
    try:
        columns, rows = query_analyses(root, sql, params)
    except NoAnalyses as e:
        raise Misuse(str(e)) from None
    except duckdb.Error as e:
        raise Misuse(first_line(str(e))) from None
    write_result(fmt, columns, rows, sys.stdout)


def _lucks(
    specs: Sequence[Any],
    rollouts: int,
    policy: str,
    seed: int,
    workers: int | None,
    ray_address: str | None,
    progress: bool,
) -> list[Any]:
    """The luck of every match (`analysis.rollout.luck`), a match a job."""
    from analysis.parallel import default_workers
    from analysis.rollout.luck import LuckSettings, analyse_luck

    bar = Progress(progress, "luck", unit="matches")
    bar.start(len(specs))
    try:
        return analyse_luck(
            specs,
            LuckSettings(rollouts, policy, seed),
            workers=workers or default_workers(),
            progress=bar.update,
            ray_address=ray_address,
        )
    finally:
        bar.finish()


def _pars(specs: Sequence[Any], workers: int | None, ray_address: str | None) -> list[Any]:
    """Every deal's par (`analysis.rollout.par`), a match a job, on every core or Ray."""
    from analysis.parallel import default_workers, ordered_map
    from analysis.rollout.par import PAR_NODES, pars_of

    jobs = [(spec, PAR_NODES) for spec in specs]
    out: list[Any] = []
    for rounds in ordered_map(
        pars_of,
        jobs,
        min(workers or default_workers(), max(1, len(jobs))),
        ("analysis.rollout.par",),
        ray_address=ray_address,
    ):
        out += rounds
    return out
